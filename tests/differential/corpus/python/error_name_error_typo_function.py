def calculate_total(items):
    return sum(items)


print(calculate_totl([1, 2]))
