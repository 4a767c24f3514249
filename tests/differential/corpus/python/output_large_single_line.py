print("y" * 100000)
print(len("y" * 100000))
