names = ["a", "b"]
print(names.index("z"))
