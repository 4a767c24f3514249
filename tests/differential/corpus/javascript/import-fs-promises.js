// mode: module
import { readFile, writeFile, mkdir, readdir, rm } from "node:fs/promises";
await mkdir("out/nested", { recursive: true });
await writeFile("out/nested/a.txt", "alpha");
await writeFile("out/b.txt", "beta");
console.log((await readdir("out")).sort());
console.log(await readFile("out/nested/a.txt", "utf8"));
await rm("out", { recursive: true });
console.log("cleaned");
