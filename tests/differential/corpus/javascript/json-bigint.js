// mode: script
try {
  JSON.stringify({ big: 10n });
} catch (e) {
  console.log(e.name + ": " + e.message);
}
console.log(JSON.stringify({ big: 10n }, (k, v) => (typeof v === "bigint" ? v.toString() : v)));
