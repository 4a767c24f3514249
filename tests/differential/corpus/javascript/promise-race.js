// mode: script
const timeout = (ms) => new Promise((_, reject) => setTimeout(() => reject(new Error("timed out")), ms));
const work = new Promise((resolve) => setTimeout(() => resolve("work done"), 10));

Promise.race([work, timeout(50)]).then(
  (v) => console.log("race:", v),
  (e) => console.log("race failed:", e.message),
);
