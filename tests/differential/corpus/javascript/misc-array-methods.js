// mode: script
const xs = [5, 1, 4, 2, 3];
console.log(xs.toSorted(), xs, xs.toReversed(), xs.with(0, 9), xs.at(-1));
console.log(xs.findLast((x) => x > 3), xs.findLastIndex((x) => x > 3));
console.log([[1, [2]], [3]].flat(), [[1, [2]], [3]].flat(Infinity), [1, 2].flatMap((x) => [x, x * 10]));
console.log(Array.from({ length: 3 }, (_, i) => i * i), Array.of(7, 8), [3, 1, 2].includes(2));
console.log([1, 2, 3, 4].reduceRight((a, b) => a + "-" + b), Object.groupBy ? "has groupBy" : "no groupBy");
