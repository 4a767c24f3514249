// mode: module
async function main() {
  await new Promise((r) => setTimeout(r, 5));
  throw new Error("module main failed");
}

await main();
console.log("not reached");
