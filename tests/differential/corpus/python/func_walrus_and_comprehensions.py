data = [3, 8, 1, 9, 4]
if (n := len(data)) > 3:
    print(f"{n} items")
squares = {x: x * x for x in data if x % 2}
print(squares)
print([y for x in data if (y := x * 10) > 30])
print({c for c in "mississippi"} == set("misp"))
