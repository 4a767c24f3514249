def pairs():
    yield 1
    yield 2


it = pairs()
print(next(it), next(it))
next(it)
