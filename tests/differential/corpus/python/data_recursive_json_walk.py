def walk(value, path="$"):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from walk(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from walk(v, f"{path}[{i}]")
    else:
        yield path, value


doc = {"a": [1, {"b": None}], "c": {"d": "x", "e": [True, 2.5]}}
for p, v in walk(doc):
    print(p, "=", repr(v))
