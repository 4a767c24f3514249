// mode: script
setTimeout(() => {
  console.log("outer");
  setTimeout(() => {
    console.log("inner");
    setImmediate(() => console.log("immediate after inner"));
  }, 5);
}, 5);
