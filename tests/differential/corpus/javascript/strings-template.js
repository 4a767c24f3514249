// mode: script
const user = { first: "Ada", last: "Lovelace", born: 1815 };
const html = `
<div>
  <h1>${user.first} ${user.last}</h1>
  <p>Born ${user.born} (${2024 - user.born} years ago)</p>
</div>`;
console.log(html);
console.log(String.raw`C:\new\table ${1 + 1}`);
const tag = (strings, ...vals) => strings.raw.map((s, i) => s + (vals[i] ?? "")).join("|");
console.log(tag`a${1}b${2}c`);
