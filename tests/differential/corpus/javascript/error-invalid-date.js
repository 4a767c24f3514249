// mode: script
const d = new Date("not a date");
console.log(String(d), isNaN(d.getTime()));
console.log(d.toISOString());
