class Counter:
    def __init__(self):
        self.count = 0


c = Counter()
c.count += 1
print(c.cont)
