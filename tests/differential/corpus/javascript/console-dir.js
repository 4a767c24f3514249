// mode: script
const deep = { l1: { l2: { l3: { l4: { l5: "bottom" } } } }, list: [1, [2, [3, [4]]]] };
console.dir(deep);
console.dir(deep, { depth: null });
console.dir(deep, { depth: 0 });
console.dir("a string");
