// mode: script
const util = require("util");
function legacy(x, cb) {
  setTimeout(() => (x < 0 ? cb(new Error("negative")) : cb(null, x * 2)), 5);
}
const modern = util.promisify(legacy);
modern(21).then((v) => console.log("value", v));
modern(-1).catch((e) => console.log("error", e.message));
