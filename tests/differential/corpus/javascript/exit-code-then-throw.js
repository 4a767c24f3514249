// mode: script
process.exitCode = 2;
console.log("set exit code");
throw new Error("thrown after exitCode");
