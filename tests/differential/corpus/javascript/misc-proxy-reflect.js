// mode: script
const target = { a: 1 };
const logged = new Proxy(target, {
  get(t, k, r) {
    if (typeof k === "string") console.log("get", k);
    return Reflect.get(t, k, r);
  },
  set(t, k, v) {
    console.log("set", k, v);
    return Reflect.set(t, k, v);
  },
});
logged.b = logged.a + 1;
console.log(Reflect.ownKeys(target), Reflect.has(target, "b"));
