// mode: script
const csv = " alpha , beta,gamma ,, delta ";
console.log(csv.split(","));
console.log(csv.split(/\s*,\s*/).map((s) => s.trim()).filter(Boolean));
console.log("one  two\tthree\nfour".split(/\s+/));
console.log("abc".split(""));
