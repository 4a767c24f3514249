// mode: module
import { createInterface } from "node:readline";
import { Readable } from "node:stream";
const rl = createInterface({ input: Readable.from(["alpha\nbeta\n", "gamma\n"]) });
const lines = [];
for await (const line of rl) lines.push(line.toUpperCase());
console.log(lines);
