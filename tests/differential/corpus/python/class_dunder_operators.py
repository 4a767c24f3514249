class Vector:
    def __init__(self, *components):
        self.c = components

    def __add__(self, other):
        return Vector(*(a + b for a, b in zip(self.c, other.c)))

    def __mul__(self, k):
        return Vector(*(a * k for a in self.c))

    __rmul__ = __mul__

    def __eq__(self, other):
        return isinstance(other, Vector) and self.c == other.c

    def __len__(self):
        return len(self.c)

    def __repr__(self):
        return f"Vector{self.c}"


v = Vector(1, 2, 3)
print(v + v, 2 * v, v * 3, len(v), v == Vector(1, 2, 3))
