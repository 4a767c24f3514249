// mode: script
const e = new Error("custom name");
e.name = "DatabaseError";
console.log(String(e));
console.log(`${e}`);
console.log(e.toString());
