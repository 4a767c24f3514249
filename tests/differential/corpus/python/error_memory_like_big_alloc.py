try:
    data = [0] * (10 ** 12)
except MemoryError:
    print("MemoryError caught")
