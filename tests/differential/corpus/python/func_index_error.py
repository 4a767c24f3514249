items = ["a", "b", "c"]
for i in range(4):
    print(items[i])
