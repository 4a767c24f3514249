// mode: module
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import type { Stats } from "node:fs";
writeFileSync("t.txt", "typed");
const text: string = readFileSync("t.txt", "utf8");
const info: Pick<Stats, "size"> = { size: text.length };
console.log(text, info, path.extname("t.txt"));
