// mode: script
class Money {
  get [Symbol.toStringTag]() {
    return "Money";
  }
}
console.log(Object.prototype.toString.call(new Money()));
console.log(new Money());
