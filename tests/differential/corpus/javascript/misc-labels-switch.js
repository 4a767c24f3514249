// mode: script
outer: for (let i = 0; i < 3; i++) {
  for (let j = 0; j < 3; j++) {
    if (j === 2) continue outer;
    if (i === 2) break outer;
    console.log(i, j);
  }
}
function kind(x) {
  switch (typeof x) {
    case "number":
    case "bigint":
      return "numeric";
    case "string":
      return "text";
    default:
      return "other";
  }
}
console.log([1, 2n, "s", null].map(kind));
