// mode: module
import { fileURLToPath } from "node:url";
import path from "node:path";
function main() {
  console.log("running as main");
}
if (process.argv[1] === fileURLToPath(import.meta.url)) main();
console.log(path.basename(fileURLToPath(import.meta.url)).endsWith(".mjs"));
