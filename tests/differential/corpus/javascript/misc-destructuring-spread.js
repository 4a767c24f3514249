// mode: script
const { a, b: { c = 5, ...restB } = {}, ...rest } = { a: 1, b: { d: 2, e: 3 }, f: 4, g: 5 };
console.log(a, c, restB, rest);
const [first, , third = "default", ...others] = [1, 2, undefined, 4, 5];
console.log(first, third, others);
const merged = { ...{ x: 1, y: 2 }, ...{ y: 3 }, z: [...[1, 2], ...new Set([3])] };
console.log(merged);
