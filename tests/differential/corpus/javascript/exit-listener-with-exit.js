// mode: script
process.on("exit", (code) => console.log("exit handler, code", code));
setTimeout(() => {
  console.log("timer");
  process.exit(5);
}, 5);
