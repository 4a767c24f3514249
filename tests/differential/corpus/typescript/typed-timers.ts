// mode: script
const timer: ReturnType<typeof setTimeout> = setTimeout(() => console.log("typed timer fired"), 20);
const handle: NodeJS.Timeout = setInterval(() => {
  console.log("interval once");
  clearInterval(handle);
}, 5);
console.log(typeof timer);
