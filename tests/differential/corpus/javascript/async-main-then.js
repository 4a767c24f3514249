// mode: script
async function main() {
  return { total: 42 };
}

main().then((result) => {
  console.log("Result:", result);
});
