// mode: script
function f() {
  try {
    console.log("try");
    return "from try";
  } finally {
    console.log("finally");
  }
}
console.log(f());
