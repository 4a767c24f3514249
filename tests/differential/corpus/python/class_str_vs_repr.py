class Item:
    def __init__(self, name, price):
        self.name, self.price = name, price

    def __str__(self):
        return f"{self.name} (${self.price:.2f})"

    def __repr__(self):
        return f"Item({self.name!r}, {self.price!r})"


items = [Item("pen", 1.5), Item("book", 12)]
print(items)
for item in items:
    print(item)
print(f"{items[0]!r} / {items[1]!s}")
