import sys


def probe(n):
    try:
        return probe(n + 1)
    except RecursionError:
        return n


print(sys.getrecursionlimit(), probe(0))
