from dataclasses import dataclass


@dataclass
class Circle:
    r: float


@dataclass
class Rect:
    w: float
    h: float


def area(shape):
    match shape:
        case Circle(r=r):
            return round(3.14159 * r * r, 2)
        case Rect(w, h) if w == h:
            return f"square {w * h}"
        case Rect(w, h):
            return w * h
        case {"type": "tri", "b": b, "h": h}:
            return b * h / 2


print(area(Circle(1)), area(Rect(2, 2)), area(Rect(2, 3)), area({"type": "tri", "b": 4, "h": 3}))
