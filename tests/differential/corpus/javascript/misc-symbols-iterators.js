// mode: script
const obj = {
  from: 1,
  to: 4,
  [Symbol.iterator]() {
    let cur = this.from;
    const last = this.to;
    return { next: () => (cur <= last ? { value: cur++, done: false } : { value: undefined, done: true }) };
  },
};
console.log([...obj], Math.max(...obj));
const sym = Symbol.for("app.key");
console.log(Symbol.keyFor(sym), sym === Symbol.for("app.key"));
