// mode: script
const s = Symbol("token");
console.log(s.toString(), s.description);
console.log(`${s}`);
