// mode: script
const rows = [{ id: 1 }, { id: 2 }, { id: 1 }];
const seen = new Set();
const unique = rows.filter((r) => (seen.has(r.id) ? false : seen.add(r.id)));
console.log(unique, seen.size);
const ws = new WeakSet([rows[0]]);
console.log(ws.has(rows[0]), ws.has(rows[2]));
