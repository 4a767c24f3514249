// mode: script
const p = Promise.reject(new Error("handled too late"));
setTimeout(() => {
  p.catch((e) => console.log("caught", e.message));
}, 10);
