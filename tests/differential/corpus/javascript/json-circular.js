// mode: script
const a = { name: "a" };
a.self = a;
try {
  JSON.stringify(a);
} catch (e) {
  console.log(e.name, e.message.split("\n")[0]);
}
