// mode: script
const text = "the quick brown fox jumps over the lazy dog the end";
const counts = new Map();
for (const w of text.split(" ")) counts.set(w, (counts.get(w) ?? 0) + 1);
const top = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 3);
console.log(top);
