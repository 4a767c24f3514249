// mode: script
console.log("x");
throw null;
