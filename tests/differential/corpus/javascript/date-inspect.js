// mode: script
const d = new Date(Date.UTC(1999, 11, 31, 23, 59, 59));
console.log(d);
console.log([d], { when: d });
console.log(new Date(NaN));
