raise ValueError("first", 2, [3])
