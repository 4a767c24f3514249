// mode: module
async function* lines() {
  yield "first";
  await null;
  throw new Error("stream broke");
}
try {
  for await (const line of lines()) console.log(line);
} catch (e) {
  console.log("caught:", e.message);
}
