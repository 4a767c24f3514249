// mode: script
class Point {
  constructor(x, y) {
    this.x = x;
    this.y = y;
  }
  toString() {
    return `(${this.x}, ${this.y})`;
  }
}
const p = new Point(1, 2);
console.log(`${p}`, String(p), p + "");
console.log(p);
console.log([p, p]);
