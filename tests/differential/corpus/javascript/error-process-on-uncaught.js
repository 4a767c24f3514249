// mode: script
process.on("uncaughtException", (err) => {
  console.log("handled:", err.message);
});
setTimeout(() => {
  throw new Error("from a timer");
}, 5);
setTimeout(() => console.log("still running"), 20);
