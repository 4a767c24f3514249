// mode: script
class Stack {
  #items = [];
  #check() {
    if (this.#items.length === 0) throw new Error("stack is empty");
  }
  push(x) {
    this.#items.push(x);
    return this;
  }
  pop() {
    this.#check();
    return this.#items.pop();
  }
  static isStack(o) {
    return #items in o;
  }
}
const s = new Stack().push(1).push(2);
console.log(s.pop(), s.pop(), Stack.isStack(s), Stack.isStack({}));
s.pop();
