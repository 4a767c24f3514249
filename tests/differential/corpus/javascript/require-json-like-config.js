// mode: script
const fs = require("fs");
fs.writeFileSync("config.json", JSON.stringify({ retries: 3, name: "svc" }));
const config = JSON.parse(fs.readFileSync("config.json", "utf8"));
console.log(config.retries, config.name);
fs.unlinkSync("config.json");
