from dataclasses import dataclass


@dataclass
class Range:
    low: int
    high: int

    def __post_init__(self):
        if self.low > self.high:
            raise ValueError(f"low {self.low} is above high {self.high}")


print(Range(1, 5))
print(Range(9, 2))
