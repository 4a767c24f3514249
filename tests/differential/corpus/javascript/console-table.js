// mode: script
console.table([
  { name: "apples", qty: 3, price: 1.5 },
  { name: "kiwis", qty: 12 },
  { name: "melons", price: 4 },
]);
console.table({ a: { x: 1 }, b: { x: 2, y: 3 } });
console.table([[1, 2], [3, 4]]);
console.table([{ a: 1, b: 2 }], ["a"]);
console.table("not tabular");
