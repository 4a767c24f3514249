def make_counter():
    count = 0

    def increment():
        nonlocal count
        count += 1
        return count

    return increment


c1, c2 = make_counter(), make_counter()
print(c1(), c1(), c1(), c2())
