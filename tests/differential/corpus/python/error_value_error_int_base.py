print(int("12", 2))
