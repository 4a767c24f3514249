// mode: script
process.on("exit", (code) => {
  console.log(`exiting with code ${code}`);
});
console.log("main work");
