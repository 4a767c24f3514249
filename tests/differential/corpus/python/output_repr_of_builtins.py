print(repr("quote's"), repr('dq"'), repr("both'\""), repr("\n\t\\"))
print(repr(1.0), repr(1e100), repr(0.1), repr(-0.0), repr(float("nan")))
print(repr(None), repr(...), repr(NotImplemented), repr(range(3)), repr(slice(1, 2)))
print(repr(frozenset()), repr(set()), repr({}), repr(()), repr([]), repr(1j), repr(2 + 3j))
