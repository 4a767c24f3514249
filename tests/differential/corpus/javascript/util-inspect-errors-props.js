// mode: script
const util = require("util");
const e = new Error("with props");
e.code = "E_THING";
e.details = { retry: false };
console.log(e.code, Object.keys(e));
console.log(util.inspect({ code: e.code, details: e.details }));
