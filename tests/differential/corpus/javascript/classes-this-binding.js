// mode: script
class Button {
  constructor(label) {
    this.label = label;
    this.bound = this.click.bind(this);
  }
  click() {
    return this ? this.label : "no this";
  }
  arrow = () => this.label;
}
const b = new Button("OK");
const { bound, arrow } = b;
console.log(bound(), arrow());
const unbound = b.click;
try {
  console.log(unbound());
} catch (e) {
  console.log(e.constructor.name, e.message);
}
