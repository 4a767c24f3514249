// mode: script
const jobs = [
  Promise.resolve("fine"),
  Promise.reject(new Error("broken")),
  new Promise((r) => setTimeout(() => r(7), 5)),
];

Promise.allSettled(jobs).then((outcomes) => {
  for (const o of outcomes) {
    console.log(o.status, o.status === "fulfilled" ? o.value : o.reason.message);
  }
});
