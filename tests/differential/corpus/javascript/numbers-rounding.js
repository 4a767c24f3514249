// mode: script
const round = (x, d) => Math.round((x + Number.EPSILON) * 10 ** d) / 10 ** d;
console.log(round(1.005, 2), (1.005).toFixed(2), round(2.675, 2), (2.675).toFixed(2));
console.log([1.2345, 9.995, 0.5].map((n) => n.toFixed(2)));
const total = [19.99, 5.01, 0.1].reduce((a, b) => a + b, 0);
console.log(total, total.toFixed(2));
