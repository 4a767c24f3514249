// mode: script
async function worker(n) {
  await new Promise((r) => setTimeout(r, n * 5));
  if (n === 2) throw new Error(`worker ${n} crashed`);
  console.log("worker", n, "ok");
}
for (let i = 1; i <= 3; i++) worker(i);
