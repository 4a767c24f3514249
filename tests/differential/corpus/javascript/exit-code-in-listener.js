// mode: script
process.on("exit", (code) => {
  console.log("was", code);
  process.exitCode = 0;
});
process.exitCode = 9;
