// mode: script
const p = new Promise((resolve, reject) => {
  resolve("first");
  resolve("second");
  reject(new Error("ignored"));
});
p.then((v) => console.log(v));
