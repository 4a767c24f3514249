def level3(x):
    return x["missing"]


def level2(x):
    return level3(x) + 1


def level1():
    return level2({})


level1()
