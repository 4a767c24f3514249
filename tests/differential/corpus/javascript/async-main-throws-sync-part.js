// mode: script
async function main() {
  throw new TypeError("bad input before any await");
}

main();
console.log("after main()");
