for i in range(2000):
    print(f"line {i:04d} " + "x" * (i % 50))
