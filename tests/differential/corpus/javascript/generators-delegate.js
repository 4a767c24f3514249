// mode: script
function* inner() {
  yield "a";
  yield "b";
  return "inner result";
}
function* outer() {
  const r = yield* inner();
  console.log("delegate returned", r);
  yield "c";
}
console.log([...outer()]);
