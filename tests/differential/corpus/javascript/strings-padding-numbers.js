// mode: script
const rows = [["apples", 3, 1.5], ["kiwis", 12, 0.25], ["melons", 1, 4]];
for (const [name, qty, price] of rows) {
  console.log(`${name.padEnd(8)}|${String(qty).padStart(4)}|${price.toFixed(2).padStart(7)}`);
}
console.log((1234.5678).toFixed(1), (0.000123).toExponential(2), (255).toString(16), (255).toString(2));
console.log((1e21).toString(), (123.456).toPrecision(4), Number("12px"), parseInt("12px"), parseFloat("3.14abc"));
