class InsufficientStock(Exception):
    pass


class Inventory:
    def __init__(self):
        self.stock = {}

    def add(self, sku, qty):
        self.stock[sku] = self.stock.get(sku, 0) + qty

    def remove(self, sku, qty):
        have = self.stock.get(sku, 0)
        if qty > have:
            raise InsufficientStock(f"{sku}: want {qty}, have {have}")
        self.stock[sku] = have - qty


inv = Inventory()
inv.add("A1", 10)
inv.add("B2", 3)
inv.remove("A1", 4)
print(inv.stock)
for sku, qty in [("B2", 2), ("B2", 5)]:
    try:
        inv.remove(sku, qty)
        print("removed", qty, sku)
    except InsufficientStock as e:
        print("failed:", e)
inv.remove("C3", 1)
