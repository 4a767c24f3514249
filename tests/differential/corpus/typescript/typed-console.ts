// mode: script
type Row = { name: string; score: number };
const rows: Row[] = [
  { name: "ann", score: 91.5 },
  { name: "bob", score: 78 },
];
console.table(rows);
console.log(rows);
console.dir({ nested: { rows } }, { depth: 4 });
