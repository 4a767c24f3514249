// mode: script
async function main() {
  const input = "not json";
  return JSON.parse(input);
}

main()
  .then((v) => console.log(v))
  .catch((err) => {
    console.error(err.name + ": " + err.message);
    process.exitCode = 2;
  });
