// mode: script
function level(n) {
  try {
    if (n === 0) throw new Error("bottom");
    return level(n - 1);
  } catch (e) {
    console.log("caught at", n, e.message);
    if (n < 2) throw e;
    return "recovered at " + n;
  } finally {
    console.log("finally", n);
  }
}
console.log(level(3));
