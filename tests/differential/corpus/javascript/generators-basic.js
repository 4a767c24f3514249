// mode: script
function* count(limit) {
  for (let i = 1; i <= limit; i++) {
    const reply = yield i;
    if (reply) console.log("got", reply);
  }
  return "finished";
}
const g = count(3);
console.log(g.next());
console.log(g.next("hello"));
console.log(g.next());
console.log(g.next());
console.log(g.next());
