// mode: script
try {
  try {
    throw new Error("disk full");
  } catch (e) {
    throw new Error("save failed", { cause: e });
  }
} catch (e) {
  let depth = 0;
  for (let err = e; err; err = err.cause) console.log(" ".repeat(depth++ * 2) + err.message);
}
