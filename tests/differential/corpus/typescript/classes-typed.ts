// mode: script
class Account {
  private balance: number = 0;
  readonly owner: string;
  static count: number = 0;
  constructor(owner: string) {
    this.owner = owner;
    Account.count++;
  }
  deposit(amount: number): this {
    if (amount <= 0) throw new RangeError("amount must be positive");
    this.balance += amount;
    return this;
  }
  get total(): number {
    return this.balance;
  }
}
const acc = new Account("ann").deposit(50).deposit(25);
console.log(acc.owner, acc.total, Account.count);
console.log(acc);
acc.deposit(-1);
