// mode: script
const wide = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`key${i}`, i * 1.5]));
console.log(wide);
const short = { a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7 };
console.log(short);
