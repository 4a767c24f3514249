// mode: script
async function main() {
  await new Promise((r) => setTimeout(r, 5));
  console.log("exiting from async code");
  process.exit(0);
}
main();
setTimeout(() => console.log("never"), 1000);
