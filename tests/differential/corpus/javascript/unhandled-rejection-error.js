// mode: script
console.log("start");
Promise.reject(new Error("nobody handles this"));
setTimeout(() => console.log("never printed"), 50);
