// mode: script
process.on("unhandledRejection", (reason) => {
  console.log("unhandled:", reason.message);
});
Promise.reject(new Error("listened for"));
setTimeout(() => console.log("program continues"), 5);
