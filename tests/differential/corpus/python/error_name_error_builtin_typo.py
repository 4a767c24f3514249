print(lenght([1, 2, 3]))
