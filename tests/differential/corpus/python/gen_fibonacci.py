def fib():
    a, b = 0, 1
    while True:
        yield a
        a, b = b, a + b


for i, f in enumerate(fib()):
    if i >= 12:
        break
    print(f, end=" ")
print()
