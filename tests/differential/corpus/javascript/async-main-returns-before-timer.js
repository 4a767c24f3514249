// mode: script
async function main() {
  setTimeout(() => console.log("timer fired after main returned"), 30);
  console.log("main returns");
}

main().then(() => console.log("main resolved"));
