// mode: module
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
for (let attempt = 1; attempt <= 3; attempt++) {
  console.log("attempt", attempt);
  await sleep(5 * attempt);
}
console.log("gave up");
