// mode: script
function debounce(fn, ms) {
  let t;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
}
const log = debounce((v) => console.log("debounced:", v), 10);
log(1);
log(2);
log(3);
