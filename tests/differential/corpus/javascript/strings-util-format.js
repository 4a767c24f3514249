// mode: script
const util = require("util");
console.log(util.format("%s is %d years and %i days", "Bob", 42.5, 3.9));
console.log(util.format("%j | %o", { a: [1] }, { b: { c: 2 } }));
console.log(util.format("%f%%", 99.5), util.format("no args %s"), util.format("extra", 1, "two"));
console.log(util.format("%O", { deep: { deeper: { deepest: { bottom: 1 } } } }));
