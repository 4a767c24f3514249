try:
    raise ValueError("x")
except ValueError as e:
    print("caught:", e)
print("and continued")
