// mode: script
const util = require("util");
const data = { a: [1, 2, { b: { c: { d: 1 } } }], s: "str", m: new Map([["k", { v: 1 }]]) };
console.log(util.inspect(data));
console.log(util.inspect(data, { depth: 0 }));
console.log(util.inspect(data, { depth: Infinity, compact: false }));
console.log(util.inspect(data, { breakLength: Infinity }));
console.log(util.inspect(data, { sorted: true, compact: 1 }));
