// mode: script
const tasks = [30, 10, 20].map(
  (ms, i) => new Promise((resolve) => setTimeout(() => resolve(`task${i}:${ms}`), ms)),
);

Promise.all(tasks).then((results) => {
  console.log(results);
});
