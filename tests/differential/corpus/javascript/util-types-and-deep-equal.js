// mode: script
const util = require("util");
console.log(util.types.isPromise(Promise.resolve()), util.types.isRegExp(/a/), util.types.isDate(new Date(0)));
console.log(util.isDeepStrictEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }));
console.log(util.isDeepStrictEqual([1, 2], [1, "2"]));
console.log(util.inspect(new Map([[1, 2]]), { showHidden: true }));
