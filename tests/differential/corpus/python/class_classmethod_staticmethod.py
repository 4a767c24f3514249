class Money:
    rate = 1.1

    def __init__(self, cents):
        self.cents = cents

    @classmethod
    def from_dollars(cls, dollars):
        return cls(int(round(dollars * 100)))

    @staticmethod
    def format(cents):
        return f"${cents // 100}.{cents % 100:02d}"

    def __str__(self):
        return self.format(self.cents)


print(Money.from_dollars(12.345), Money(5), Money.format(1999))
