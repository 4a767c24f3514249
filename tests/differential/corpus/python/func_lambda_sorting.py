people = [("ann", 31), ("bob", 25), ("cid", 31), ("dee", 22)]
print(sorted(people, key=lambda p: (-p[1], p[0])))
print(max(people, key=lambda p: p[1]))
print(list(filter(lambda p: p[1] > 24, people)))
