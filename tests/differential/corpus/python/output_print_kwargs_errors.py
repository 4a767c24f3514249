print("a", sep=5)
