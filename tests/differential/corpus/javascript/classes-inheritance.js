// mode: script
class Animal {
  constructor(name) {
    this.name = name;
  }
  speak() {
    return `${this.name} makes a sound`;
  }
}
class Dog extends Animal {
  speak() {
    return `${super.speak()} (woof)`;
  }
}
const d = new Dog("Rex");
console.log(d.speak());
console.log(d instanceof Animal, Object.getPrototypeOf(d) === Dog.prototype);
console.log(d);
