// mode: script
class User {
  constructor(name) {
    this.name = name;
    this.roles = ["admin"];
  }
}
class Admin extends User {}
console.log(new User("ann"));
console.log([new Admin("bob")]);
console.log({ users: [new User("c"), new Admin("d")] });
const anon = new (class {})();
console.log(anon);
