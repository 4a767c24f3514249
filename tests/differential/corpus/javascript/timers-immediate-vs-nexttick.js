// mode: script
setImmediate(() => console.log("immediate 1"));
process.nextTick(() => console.log("tick 1"));
setImmediate(() => {
  console.log("immediate 2");
  process.nextTick(() => console.log("tick inside immediate"));
});
process.nextTick(() => console.log("tick 2"));
