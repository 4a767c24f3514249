// mode: script
function once(fn) {
  let done = false;
  let result;
  return function (...args) {
    if (!done) {
      done = true;
      result = fn.apply(this, args);
    }
    return result;
  };
}
const init = once(() => {
  console.log("initializing");
  return 42;
});
console.log(init(), init(), init());
