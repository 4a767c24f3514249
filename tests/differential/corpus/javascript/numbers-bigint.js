// mode: script
const factorial = (n) => (n <= 1n ? 1n : n * factorial(n - 1n));
console.log(factorial(25n));
console.log(factorial(25n).toString().length, typeof 1n, 2n ** 64n);
console.log(BigInt(Number.MAX_SAFE_INTEGER) + 2n, BigInt.asUintN(8, 257n));
console.log([1n, 2n], { n: 3n });
