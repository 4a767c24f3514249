names = ["a", "b", "c"]
scores = [1, 2]
print(list(zip(names, scores)))
print(list(zip(names, scores, strict=True)))
