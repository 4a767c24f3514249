// mode: script
const big: bigint = 2n ** 70n;
const small: number = Number(big >> 60n);
console.log(big, small, typeof big);
