// mode: module
import { EventEmitter, once } from "node:events";
const ee = new EventEmitter();
setTimeout(() => ee.emit("ready", 42, "extra"), 5);
const args = await once(ee, "ready");
console.log("ready with", args);
