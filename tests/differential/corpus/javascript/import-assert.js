// mode: module
import assert from "node:assert/strict";
assert.deepEqual({ a: [1, 2] }, { a: [1, 2] });
console.log("deepEqual passed");
try {
  assert.equal(1, 2, "numbers differ");
} catch (e) {
  console.log(e.name, e.code, e.message);
}
