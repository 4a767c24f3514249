// mode: script
console.log("finishing with a failure status");
process.exitCode = 4;
