// mode: script
console.log("main body done");
setTimeout(() => console.log("later"), 100);
