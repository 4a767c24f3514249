// mode: script
console.log(typeof hoisted, typeof notYet);
function hoisted() {
  return "hoisted";
}
var notYet = () => "assigned";
console.log(hoisted(), notYet());
try {
  console.log(later);
} catch (e) {
  console.log(e.name, e.message);
}
let later = 1;
