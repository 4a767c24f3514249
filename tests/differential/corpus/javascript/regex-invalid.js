// mode: script
const pattern = "(unclosed";
console.log("building");
const re = new RegExp(pattern);
console.log(re);
