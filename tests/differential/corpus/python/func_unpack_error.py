values = [1, 2, 3]
x, y = values
