def evens(limit):
    n = 0
    while n < limit:
        yield n
        n += 2


print(list(evens(10)))
g = evens(4)
print(next(g), next(g))
print(next(g, "exhausted"))
