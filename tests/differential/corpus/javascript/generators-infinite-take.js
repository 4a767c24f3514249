// mode: script
function* fibonacci() {
  let [a, b] = [0, 1];
  while (true) {
    yield a;
    [a, b] = [b, a + b];
  }
}
function* take(n, it) {
  for (const x of it) {
    if (n-- <= 0) return;
    yield x;
  }
}
console.log(Array.from(take(10, fibonacci())));
