from enum import Enum, auto


class Color(Enum):
    RED = auto()
    GREEN = auto()
    BLUE = auto()


print(Color.RED, Color.GREEN.value, Color["BLUE"], list(Color))
print(Color(2).name, Color.RED is Color.RED)
