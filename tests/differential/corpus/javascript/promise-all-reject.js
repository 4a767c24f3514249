// mode: script
async function main() {
  try {
    await Promise.all([
      Promise.resolve(1),
      Promise.reject(new Error("second failed")),
      new Promise((r) => setTimeout(() => r(3), 10)),
    ]);
  } catch (e) {
    console.log("Promise.all rejected:", e.message);
  }
}
main();
