from dataclasses import dataclass, field


@dataclass
class Account:
    owner: str
    balance: float = 0.0
    history: list = field(default_factory=list)

    def deposit(self, amount):
        if amount <= 0:
            raise ValueError("deposit must be positive")
        self.balance += amount
        self.history.append(("deposit", amount))

    def withdraw(self, amount):
        if amount > self.balance:
            raise ValueError(f"insufficient funds: balance {self.balance:.2f}, requested {amount:.2f}")
        self.balance -= amount
        self.history.append(("withdraw", amount))


acct = Account("ann")
acct.deposit(100)
acct.withdraw(30.5)
print(acct)
acct.withdraw(500)
