d = {"a": 1, "b": 2, "c": 3}
for key, value in d:
    print(key, value)
