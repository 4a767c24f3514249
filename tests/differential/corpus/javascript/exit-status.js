// mode: script
console.log("something is wrong");
process.exit(3);
