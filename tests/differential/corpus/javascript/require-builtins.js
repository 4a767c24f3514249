// mode: script
const fs = require("fs");
const path = require("path");
const { promisify } = require("util");
const os = require("node:os");
console.log(typeof fs.readFileSync, path.join("a", "..", "b"), typeof promisify, typeof os.platform());
