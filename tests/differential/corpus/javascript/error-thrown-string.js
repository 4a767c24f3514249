// mode: script
console.log("about to throw");
throw "something bad happened";
