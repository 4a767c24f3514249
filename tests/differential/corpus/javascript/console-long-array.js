// mode: script
console.log(Array.from({ length: 120 }, (_, i) => i));
console.log(Array.from({ length: 30 }, (_, i) => "item" + i));
console.log("x".repeat(200));
console.log({ long: "y".repeat(100), arr: Array(8).fill({ k: 1 }) });
