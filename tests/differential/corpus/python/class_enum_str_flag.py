from enum import Flag, IntEnum, StrEnum, auto


class Perm(Flag):
    R = auto()
    W = auto()
    X = auto()


class Level(IntEnum):
    LOW = 1
    HIGH = 3


class Mode(StrEnum):
    FAST = auto()
    SAFE = auto()


print(Perm.R | Perm.W, Perm.R in (Perm.R | Perm.X), Level.HIGH > Level.LOW, Level.LOW + 1)
print(Mode.FAST, Mode.SAFE == "safe", f"{Mode.FAST}")
