// mode: script
const delay = (ms, v) => new Promise((r) => setTimeout(() => r(v), ms));

async function sequential() {
  const a = await delay(20, "a");
  const b = await delay(10, "b");
  return [a, b];
}

async function parallel() {
  return Promise.all([delay(20, "x"), delay(10, "y")]);
}

async function main() {
  console.log(await sequential());
  console.log(await parallel());
}

main();
