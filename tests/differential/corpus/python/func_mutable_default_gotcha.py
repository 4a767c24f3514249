def append_to(item, target=[]):
    target.append(item)
    return target


print(append_to(1))
print(append_to(2))
print(append_to(3, []))
