// mode: module
import fs from "fs";
import path from "path";
const file = path.join(".", "data.json");
fs.writeFileSync(file, JSON.stringify({ ok: true }));
console.log(JSON.parse(fs.readFileSync(file, "utf8")));
console.log(path.extname(file), path.basename(file, ".json"));
