// mode: script
function g() {
  try {
    throw new Error("lost");
  } finally {
    return "finally wins";
  }
}
console.log(g());
