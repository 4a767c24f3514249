class Key:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return (self.a, self.b) == (other.a, other.b)

    def __hash__(self):
        return hash((self.a, self.b))


d = {Key(1, 2): "first"}
print(d[Key(1, 2)], Key(1, 2) in d, len({Key(1, 2), Key(1, 2), Key(2, 1)}))
