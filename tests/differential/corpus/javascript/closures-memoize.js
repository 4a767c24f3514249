// mode: script
function memoize(fn) {
  const cache = new Map();
  return (n) => {
    if (cache.has(n)) return cache.get(n);
    const v = fn(n);
    cache.set(n, v);
    return v;
  };
}
let calls = 0;
const slowSquare = memoize((n) => {
  calls++;
  return n * n;
});
console.log(slowSquare(4), slowSquare(4), slowSquare(5), "calls:", calls);
const fib = memoize((n) => (n < 2 ? n : fib(n - 1) + fib(n - 2)));
console.log(fib(90));
