// mode: script
const fs = require("fs");
fs.writeFile("cb.txt", "written by a callback", (err) => {
  if (err) throw err;
  fs.readFile("cb.txt", "utf8", (err2, text) => {
    console.log("read back:", text);
    fs.unlinkSync("cb.txt");
  });
});
console.log("scheduled the write");
