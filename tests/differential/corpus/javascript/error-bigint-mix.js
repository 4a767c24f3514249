// mode: script
const big = 10n;
console.log(big * 3n);
console.log(big + 1);
