// mode: script
function wrap(text, width) {
  const lines = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if ((line + " " + word).trim().length > width) {
      lines.push(line);
      line = word;
    } else line = (line + " " + word).trim();
  }
  if (line) lines.push(line);
  return lines;
}
const text = "The quick brown fox jumps over the lazy dog and keeps running far away into the hills";
console.log(wrap(text, 20).join("\n"));
