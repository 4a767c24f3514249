// mode: script
let rounds = 0;
process.on("beforeExit", (code) => {
  if (rounds < 2) {
    rounds++;
    console.log("beforeExit", code, "round", rounds);
    setTimeout(() => console.log("more work", rounds), 1);
  }
});
console.log("body");
