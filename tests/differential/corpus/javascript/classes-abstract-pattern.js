// mode: script
class Shape {
  area() {
    throw new Error(`${this.constructor.name} must implement area()`);
  }
}
class Square extends Shape {
  constructor(s) {
    super();
    this.s = s;
  }
  area() {
    return this.s ** 2;
  }
}
class Circle extends Shape {}
console.log(new Square(3).area());
console.log(new Circle().area());
