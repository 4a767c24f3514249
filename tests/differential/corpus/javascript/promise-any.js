// mode: script
Promise.any([
  Promise.reject(new Error("a")),
  new Promise((r) => setTimeout(() => r("b"), 10)),
  Promise.reject(new Error("c")),
]).then((first) => console.log("first fulfilled:", first));

Promise.any([Promise.reject(new Error("x")), Promise.reject(new Error("y"))]).catch((e) => {
  console.log(e.constructor.name, e.message, e.errors.map((x) => x.message));
});
