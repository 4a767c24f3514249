// mode: script
const t = setTimeout(() => console.log("never: the timer was unref'd"), 50);
t.unref();
console.log("exiting without waiting");
