// mode: script
const data = [4, 8, 15, 16, 23, 42];
const mean = data.reduce((a, b) => a + b) / data.length;
const sorted = [...data].sort((a, b) => a - b);
const median = (sorted[2] + sorted[3]) / 2;
const variance = data.reduce((s, x) => s + (x - mean) ** 2, 0) / data.length;
console.log({ mean, median, std: Math.sqrt(variance).toFixed(3) });
console.log([10, 9, 1, 100].sort(), [10, 9, 1, 100].sort((a, b) => a - b));
