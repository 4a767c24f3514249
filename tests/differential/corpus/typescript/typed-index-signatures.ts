// mode: script
interface Dictionary { [key: string]: number | undefined }
const counts: Dictionary = {};
for (const w of "a b a c b a".split(" ")) counts[w] = (counts[w] ?? 0) + 1;
console.log(counts);
const entries = Object.entries(counts).sort(([, a], [, b]) => (b ?? 0) - (a ?? 0));
console.log(entries[0]);
