// mode: script
const Serializable = (Base) =>
  class extends Base {
    serialize() {
      return JSON.stringify(this);
    }
  };
class Base {
  constructor() {
    this.kind = "base";
  }
}
class Item extends Serializable(Base) {
  constructor(name) {
    super();
    this.name = name;
  }
}
console.log(new Item("lamp").serialize());
