parsed = list(map(lambda s: int(s), ["1", "2", "x"]))
