// mode: script
class Account {
  constructor(balance) {
    if (balance < 0) throw new RangeError(`negative balance: ${balance}`);
    this.balance = balance;
  }
}
const ok = new Account(10);
console.log(ok.balance);
new Account(-5);
