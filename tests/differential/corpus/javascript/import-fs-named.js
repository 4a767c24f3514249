// mode: module
import { writeFileSync, readFileSync, existsSync, unlinkSync } from "node:fs";
writeFileSync("notes.txt", "line one\nline two\n");
console.log(existsSync("notes.txt"));
console.log(readFileSync("notes.txt", "utf8").split("\n").filter(Boolean));
unlinkSync("notes.txt");
console.log(existsSync("notes.txt"));
