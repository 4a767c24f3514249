// mode: script
console.log(JSON.stringify([NaN, Infinity, -0, null, undefined, () => 1, Symbol("s")]));
console.log(JSON.stringify({ a: NaN, b: undefined, c: null }));
console.log(JSON.stringify("he said \"hi\"\n\u2028"));
console.log(JSON.stringify(new Map([["a", 1]])), JSON.stringify(new Set([1])));
