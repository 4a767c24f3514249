// mode: script
const colors = ["red", "green", "blue"];
for (const [i, c] of colors.entries()) console.log(i, c);
const m = new Map(Object.entries({ x: 1, y: 2 }));
for (const [k, v] of m) console.log(k, "=>", v);
console.log([...m.keys()], [...m.values()]);
