// mode: script
const err = new AggregateError([new Error("one"), new TypeError("two")], "several things failed");
console.log(err.name, err.message, err.errors.length);
for (const e of err.errors) console.log("-", e.name, e.message);
