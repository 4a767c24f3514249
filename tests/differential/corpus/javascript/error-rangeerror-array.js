// mode: script
const n = -1;
console.log("allocating");
const arr = new Array(n);
console.log(arr.length);
