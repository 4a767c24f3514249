def accumulator():
    total = 0
    while True:
        value = yield total
        if value is None:
            return total
        total += value


acc = accumulator()
next(acc)
for x in (5, 10, 20):
    print(acc.send(x))
try:
    acc.send(None)
except StopIteration as stop:
    print("final", stop.value)
