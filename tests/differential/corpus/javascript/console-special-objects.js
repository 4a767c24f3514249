// mode: script
console.log(new Error("an error in a log").message);
console.log(Object.create(null), Object.assign(Object.create(null), { a: 1 }));
console.log(new Uint8Array([1, 2, 3]), new Float64Array(2), new ArrayBuffer(4));
console.log(Buffer.from("abc"));
console.log(new Map([[{ k: 1 }, [1, 2]]]), new Set([[1], { a: 1 }]));
console.log([new WeakMap(), new WeakSet()], Promise.resolve(5), new Promise(() => {}));
console.log({ s: Symbol.iterator, [Symbol("key")]: "symbol-keyed" });
console.log(new Proxy({ a: 1 }, {}), new Number(3), new String("boxed"), new Boolean(false));
