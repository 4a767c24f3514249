// mode: script
setTimeout((a, b) => console.log("args:", a, b), 5, "first", 2);
const t = setTimeout(() => console.log("cancelled"), 5);
clearTimeout(t);
