// mode: module
import os from "node:os";
console.log(typeof os.cpus().length, os.EOL === "\n", typeof os.tmpdir());
