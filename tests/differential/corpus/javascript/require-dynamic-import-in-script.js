// mode: script
async function main() {
  const { createHash } = await import("node:crypto");
  console.log(createHash("sha1").update("x").digest("hex"));
}
main();
