import copy

original = {"a": [1, 2], "b": {"c": [3]}}
shallow = copy.copy(original)
deep = copy.deepcopy(original)
original["a"].append(99)
original["b"]["c"].append(100)
print(shallow, deep, sep="\n")
