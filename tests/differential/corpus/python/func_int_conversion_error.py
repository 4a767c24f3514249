values = ["10", "20", "x30"]
numbers = [int(v) for v in values]
print(sum(numbers))
