x = [1, 2]
assert len(x) == 3
