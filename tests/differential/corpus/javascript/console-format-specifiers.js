// mode: script
console.log("%s has %d items costing %f", "cart", 3, 9.99);
console.log("%i%%", 42.9);
console.log("%o", { nested: { a: [1, 2] } });
console.log("%O", { nested: { a: [1, 2] } });
console.log("%j", { j: 1 });
console.log("%c styled", "color: red");
console.log("%s", { obj: true }, "extra", 5);
console.log("100%", "literal");
