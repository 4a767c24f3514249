// mode: script
function recurse(n) {
  return recurse(n + 1) + 1;
}
try {
  recurse(0);
} catch (e) {
  console.log(e.name, e.message);
}
