prices = {"apple": 1.0, "pear": 2.0}
print(prices["banana"])
