// mode: script
Promise.resolve(1)
  .then((x) => x + 1)
  .then((x) => {
    console.log("value", x);
    return x * 10;
  })
  .then((x) => console.log("final", x))
  .finally(() => console.log("finally"));
