// mode: module
async function main() {
  const values = await Promise.all([1, 2, 3].map(async (n) => n * n));
  console.log("squares:", values);
  return values.reduce((a, b) => a + b, 0);
}

const total = await main();
console.log("total:", total);
