// mode: script
function main() {
  console.log("main ran", typeof module, typeof exports, typeof __dirname, typeof __filename);
}
if (require.main === module) {
  main();
}
module.exports = { main };
