values = [3, "4", 1]
print(sorted(values))
