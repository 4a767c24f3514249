from dataclasses import dataclass


@dataclass(frozen=True)
class Coordinate:
    lat: float
    lon: float


c = Coordinate(51.5, -0.12)
print(c, hash(c) == hash(Coordinate(51.5, -0.12)))
c.lat = 0.0
