d = {"a": 1, "b": 2}
for k in d:
    d[k + "x"] = 0
