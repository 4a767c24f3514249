def walk(node):
    return walk(node + 1)


walk(0)
