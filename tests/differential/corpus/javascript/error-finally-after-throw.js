// mode: script
function run() {
  try {
    console.log("running");
    throw new Error("run failed");
  } finally {
    console.log("finally runs before the error escapes");
  }
}
run();
