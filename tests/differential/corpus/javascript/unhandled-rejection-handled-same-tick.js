// mode: script
const p = Promise.reject(new Error("handled in time"));
Promise.resolve().then(() => p.catch((e) => console.log("caught", e.message)));
