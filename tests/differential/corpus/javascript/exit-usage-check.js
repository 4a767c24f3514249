// mode: script
const args = process.argv.slice(2);
if (args.length === 0) {
  console.error("usage: prog <file>");
  process.exit(1);
}
console.log("never");
