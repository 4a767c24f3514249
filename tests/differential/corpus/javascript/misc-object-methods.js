// mode: script
const o = { b: 2, a: 1, [Symbol("s")]: 3 };
console.log(Object.keys(o), Object.values(o), Object.entries(o));
const frozen = Object.freeze({ x: 1 });
frozen.x = 2;
console.log(frozen.x, Object.isFrozen(frozen));
console.log(Object.getOwnPropertyNames([1, 2]), Object.hasOwn(o, "a"), "toString" in o);
console.log(Object.entries({ 2: "b", 1: "a", x: "c" }));
