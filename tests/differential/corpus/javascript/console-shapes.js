// mode: script
console.log(1, "two", true, null, undefined, -0, 10n, Symbol("s"));
console.log([1, "a", [2, [3, [4, [5]]]]]);
console.log({ a: { b: { c: { d: { e: 1 } } } } });
console.log({ "key with space": 1, valid_id: 2, 3: "num" });
console.log([undefined, null, , 4]);
console.log(["a string in an array"], "a string alone");
console.log(function named() {}, () => {}, class K {}, async function af() {});
