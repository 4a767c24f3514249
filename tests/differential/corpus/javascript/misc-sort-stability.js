// mode: script
const items = [
  { name: "b", score: 2 },
  { name: "a", score: 1 },
  { name: "c", score: 2 },
  { name: "d", score: 1 },
];
console.log(items.sort((x, y) => x.score - y.score).map((i) => i.name).join(""));
console.log(["é", "e", "z", "a", "E"].sort(), ["é", "e", "z", "a", "E"].sort((a, b) => a.localeCompare(b)));
