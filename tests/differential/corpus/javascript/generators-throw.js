// mode: script
function* g() {
  try {
    yield 1;
  } catch (e) {
    console.log("inside:", e.message);
    yield 2;
  }
}
const it = g();
console.log(it.next().value);
console.log(it.throw(new Error("injected")).value);
console.log(it.next());
