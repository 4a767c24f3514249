from pprint import pformat, pprint

data = {"users": [{"name": f"user{i}", "roles": ["admin", "dev"] * (i % 2 + 1), "id": i} for i in range(3)],
        "settings": {"theme": "dark", "limits": list(range(15))}}
pprint(data)
print(pformat({"b": 1, "a": 2}, sort_dicts=False))
pprint(list(range(30)), width=40, compact=True)
