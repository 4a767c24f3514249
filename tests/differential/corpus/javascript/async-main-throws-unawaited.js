// mode: script
async function main() {
  console.log("starting");
  await null;
  throw new Error("main failed");
}

main();
