// mode: script
function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err: unknown) {
    const message = err instanceof Error ? err.message : String(err);
    console.log("parse failed:", message.length > 0);
    return null;
  }
}
console.log(parse("[1,2]"), parse("nope"));
