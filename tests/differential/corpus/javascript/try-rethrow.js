// mode: script
function parse(text) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`parse failed for ${JSON.stringify(text)}`, { cause: e });
  }
}

try {
  parse("{bad");
} catch (e) {
  console.log(e.message);
  console.log("cause:", e.cause.name);
}
