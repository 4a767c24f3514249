return [1 + 2, -7, 1 / 2, -0, 1e300, Infinity]
