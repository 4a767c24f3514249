// mode: script
class Counter {
  static instances = 0;
  static create() {
    Counter.instances++;
    return new Counter();
  }
  static {
    console.log("static block ran");
  }
}
Counter.create();
Counter.create();
console.log(Counter.instances);
