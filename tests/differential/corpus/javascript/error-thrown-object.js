// mode: script
function check(code) {
  if (code !== 0) throw { code, message: "check failed" };
}
check(3);
