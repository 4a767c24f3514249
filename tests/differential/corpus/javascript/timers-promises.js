// mode: module
import { setTimeout as sleep } from "node:timers/promises";
const value = await sleep(10, "slept");
console.log(value);
