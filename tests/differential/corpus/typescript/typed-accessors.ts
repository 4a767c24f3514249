// mode: script
class Celsius {
  #value: number;
  constructor(v: number) {
    this.#value = v;
  }
  get fahrenheit(): number {
    return (this.#value * 9) / 5 + 32;
  }
  set fahrenheit(f: number) {
    this.#value = ((f - 32) * 5) / 9;
  }
}
const c = new Celsius(100);
console.log(c.fahrenheit);
c.fahrenheit = 32;
console.log(c.fahrenheit, c);
