// mode: script
const util = require("util");
console.log(util.inspect("it's"), util.inspect('say "hi"'), util.inspect(`both ' and "`));
console.log(util.inspect("a".repeat(20000)).length);
console.log(util.inspect(["x".repeat(30), "y".repeat(30), "z".repeat(30)]));
console.log(util.inspect(new Array(200).fill(0)).split("\n").length);
