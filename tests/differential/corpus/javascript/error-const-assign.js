// mode: script
const limit = 10;
console.log(limit);
limit = 20;
