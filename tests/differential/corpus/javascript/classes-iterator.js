// mode: script
class Range {
  constructor(start, end) {
    this.start = start;
    this.end = end;
  }
  *[Symbol.iterator]() {
    for (let i = this.start; i < this.end; i++) yield i;
  }
}
console.log([...new Range(2, 6)]);
for (const n of new Range(0, 3)) console.log("n =", n);
