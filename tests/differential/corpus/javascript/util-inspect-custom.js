// mode: script
const util = require("util");
class Secret {
  constructor(v) {
    this.v = v;
  }
  [util.inspect.custom](depth, options) {
    return `Secret<${"*".repeat(this.v.length)}>`;
  }
}
console.log(new Secret("hunter2"));
console.log({ token: new Secret("abc") });
console.log(util.inspect(new Secret("x")));
