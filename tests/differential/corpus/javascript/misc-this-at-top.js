// mode: script
function sloppy() {
  return typeof this;
}
console.log(sloppy());
console.log(typeof globalThis, typeof window, typeof global);
