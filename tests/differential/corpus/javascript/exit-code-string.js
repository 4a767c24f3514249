// mode: script
process.exitCode = "3";
console.log("string exit code");
