// mode: script
const m = new Map(Array.from({ length: 120 }, (_, i) => [`k${i}`, i]));
console.log(m);
const s = new Set(Array.from({ length: 105 }, (_, i) => i));
console.log(s);
