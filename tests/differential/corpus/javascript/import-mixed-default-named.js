// mode: module
import fs, { promises as fsp, constants } from "node:fs";
console.log(typeof fs.readFileSync, typeof fsp.readFile, typeof constants.R_OK);
