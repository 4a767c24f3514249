// mode: script
const people = [
  { name: "Ann", dept: "eng" },
  { name: "Bob", dept: "ops" },
  { name: "Cy", dept: "eng" },
];
const byDept = new Map();
for (const p of people) {
  if (!byDept.has(p.dept)) byDept.set(p.dept, []);
  byDept.get(p.dept).push(p.name);
}
console.log(byDept);
const grouped = people.reduce((acc, p) => ((acc[p.dept] ??= []).push(p.name), acc), {});
console.log(grouped);
