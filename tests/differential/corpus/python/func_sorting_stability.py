records = [{"n": "x", "g": 2}, {"n": "y", "g": 1}, {"n": "z", "g": 2}, {"n": "w", "g": 1}]
by_group = sorted(records, key=lambda r: r["g"])
print([r["n"] for r in by_group])
print(sorted(["banana", "Apple", "cherry"], key=str.lower))
print(sorted([3, 1, 2], reverse=True))
