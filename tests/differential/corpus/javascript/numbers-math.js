// mode: script
console.log(0.1 + 0.2, 0.1 + 0.2 === 0.3, Math.abs(0.3 - (0.1 + 0.2)) < Number.EPSILON);
console.log(Math.max(), Math.min(), Math.max(...[3, 9, 1]), Math.round(2.5), Math.round(-2.5));
console.log(Math.trunc(-4.7), Math.sign(-3), Math.hypot(3, 4), Math.cbrt(27), 2 ** 10);
console.log(Number.MAX_SAFE_INTEGER, Number.isSafeInteger(2 ** 53), 1 / 0, -1 / 0, 0 / 0);
console.log(7 % 3, -7 % 3, ((-7 % 3) + 3) % 3, Number.parseFloat("1e3"));
