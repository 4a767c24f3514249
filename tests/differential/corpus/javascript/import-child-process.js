// mode: module
import { execSync } from "node:child_process";
console.log(execSync("echo from a child").toString().trim());
