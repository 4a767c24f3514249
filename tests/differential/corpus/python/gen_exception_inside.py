def parse(values):
    for v in values:
        yield int(v)


total = 0
for number in parse(["1", "2", "three", "4"]):
    total += number
print(total)
