// mode: script
console.log("scheduling");
setTimeout(() => {
  console.log("in callback");
  throw new Error("failed inside the timer");
}, 10);
