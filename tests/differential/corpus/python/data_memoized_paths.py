from functools import cache


@cache
def paths(r, c):
    if r == 0 or c == 0:
        return 1
    return paths(r - 1, c) + paths(r, c - 1)


print([paths(n, n) for n in range(10)])
print(paths(16, 16))
