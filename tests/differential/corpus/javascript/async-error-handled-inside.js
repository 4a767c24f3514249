// mode: script
async function risky(n) {
  if (n % 2) throw new RangeError(`odd: ${n}`);
  return n;
}

async function main() {
  for (let i = 0; i < 4; i++) {
    try {
      console.log("ok", await risky(i));
    } catch (e) {
      console.log(e.name, e.message);
    }
  }
}

main();
