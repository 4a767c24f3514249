// mode: script
const cache = new Map();
const key1 = { id: 1 };
const key2 = { id: 1 };
cache.set(key1, "first");
console.log(cache.get(key1), cache.get(key2));
const wm = new WeakMap([[key1, "weak"]]);
console.log(wm.get(key1), wm.has(key2));
console.log(wm);
