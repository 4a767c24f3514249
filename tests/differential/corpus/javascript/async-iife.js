// mode: script
(async () => {
  const wait = (ms) => new Promise((r) => setTimeout(r, ms));
  console.log("one");
  await wait(10);
  console.log("two");
})();
