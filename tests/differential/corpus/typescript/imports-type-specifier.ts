// mode: module
import { type PathLike, existsSync } from "node:fs";
import os, { type CpuInfo } from "node:os";
const p: PathLike = "nothing-here";
const cpus: CpuInfo[] = os.cpus();
console.log(existsSync(p), Array.isArray(cpus));
