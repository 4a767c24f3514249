from collections import defaultdict

groups = defaultdict(list)
for name, team in [("ann", "red"), ("bob", "blue"), ("cid", "red")]:
    groups[team].append(name)
print(dict(groups))
nested = defaultdict(lambda: defaultdict(int))
nested["a"]["x"] += 1
nested["a"]["y"] += 2
print({k: dict(v) for k, v in nested.items()})
