print(map(str, [1]).__class__.__name__, list(map(str, [1, 2])))
print(*range(5))
print(*"abc", sep="")
print(*[], "empty star")
