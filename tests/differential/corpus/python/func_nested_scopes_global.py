total = 0


def add_all(values):
    global total
    for v in values:
        total += v


def outer():
    x = "outer"

    def inner():
        return x + "-inner"

    return inner()


add_all([1, 2, 3])
print(total, outer())
