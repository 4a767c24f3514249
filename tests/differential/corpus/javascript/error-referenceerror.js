// mode: script
function total(items) {
  return items.reduce((a, b) => a + b, 0) + tax;
}
console.log(total([1, 2]));
