// mode: script
async function main() {
  const items = [1, 2, 3];
  for (const item of items) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    console.log("processed", item);
  }
  console.log("done");
}

main();
