// mode: script
const assert = require("assert");
assert.strictEqual(1 + 1, 2);
console.log("first assertion passed");
assert.ok(false, "the second check failed");
