// mode: module
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
console.log("before");
await sleep(20);
console.log("after");
