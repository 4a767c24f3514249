// mode: module
const results = [];
for (const delay of [30, 10, 20]) {
  await new Promise((r) => setTimeout(r, delay));
  results.push(delay);
}
console.log(results);
