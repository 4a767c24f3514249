// mode: script
console.count();
console.count("apples");
console.count();
console.count("apples");
console.countReset("apples");
console.count("apples");
console.assert(1 === 1, "not shown");
console.assert(1 === 2, "shown on stderr", { detail: true });
console.assert(false);
