// mode: script
let parsed;
try {
  parsed = JSON.parse("[1, 2");
} catch {
  parsed = [];
}
console.log(parsed);
