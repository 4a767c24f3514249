// mode: script
const fs = require("fs");
try {
  fs.readFileSync("definitely-missing.txt");
} catch (e) {
  console.log(e.code, e.syscall);
}
fs.readFileSync("definitely-missing.txt");
