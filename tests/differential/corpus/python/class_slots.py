class Pixel:
    __slots__ = ("x", "y", "color")

    def __init__(self, x, y, color):
        self.x, self.y, self.color = x, y, color


p = Pixel(1, 2, "red")
print(p.x, p.y, p.color)
try:
    p.alpha = 0.5
except AttributeError as e:
    print("AttributeError:", e)
