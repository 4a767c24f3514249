data = {"matrix": [[1, 2], [3, 4]], "tuple": (1, (2, (3,))), "empty": {}, "nested": {"a": {"b": {"c": None}}}}
print(data)
print(str(data) == repr(data))
