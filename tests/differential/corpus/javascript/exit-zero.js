// mode: script
console.log("leaving early");
process.exit(0);
console.log("not printed");
