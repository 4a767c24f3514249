// mode: script
const m = new Map();
m.set("b", 2).set("a", 1).set(3, "three").set(true, "yes");
console.log(m.size, m.get("a"), m.has(3), m.get("missing"));
m.delete("b");
console.log(m);
console.log([...m]);
console.log(Object.fromEntries([...m].filter(([k]) => typeof k === "string")));
