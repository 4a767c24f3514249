// mode: script
function die(message: string): never {
  console.error(message);
  process.exit(2);
}
console.log("checking");
die("fatal: missing input");
