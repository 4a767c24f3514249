def average(values):
    return sum(values) / len(values)


print(average([1, 2, 3]))
print(average([]))
