// mode: script
let count = 0;
const t = setTimeout(function again() {
  count++;
  console.log("fire", count);
  if (count < 3) t.refresh();
}, 5);
