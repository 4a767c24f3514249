// mode: module
import { readFileSync, doesNotExist } from "node:fs";
console.log("never runs", typeof readFileSync, doesNotExist);
