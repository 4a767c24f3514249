from functools import cached_property


class Dataset:
    def __init__(self, values):
        self.values = values

    @cached_property
    def total(self):
        print("computing total")
        return sum(self.values)


d = Dataset([1, 2, 3])
print(d.total, d.total)
