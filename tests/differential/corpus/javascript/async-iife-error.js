// mode: script
(async () => {
  await new Promise((r) => setTimeout(r, 5));
  const config = undefined;
  console.log(config.name);
})();
