// mode: script
const unsorted = { b: 2, a: 1, c: { z: 1, y: 2 }, 10: "ten", 2: "two" };
const sortKeys = (v) =>
  Array.isArray(v) ? v.map(sortKeys)
  : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]))
  : v;
console.log(JSON.stringify(unsorted));
console.log(JSON.stringify(sortKeys(unsorted)));
