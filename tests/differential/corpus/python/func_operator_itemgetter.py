from operator import attrgetter, itemgetter

rows = [("x", 3), ("y", 1), ("z", 2)]
print(sorted(rows, key=itemgetter(1)))
get_both = itemgetter(0, 1)
print(get_both(["a", "b", "c"]))


class P:
    def __init__(self, n):
        self.n = n


print([p.n for p in sorted([P(3), P(1)], key=attrgetter("n"))])
