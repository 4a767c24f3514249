class Account:
    def __init__(self, balance):
        self._balance = balance

    @property
    def balance(self):
        return self._balance


acct = Account(100)
print(acct.balance)
acct.balance = 50
