// mode: script
async function main() {
  await null;
  throw new Error("could not load the data");
}

main().catch((err) => {
  console.error("Error:", err.message);
  process.exitCode = 1;
});
