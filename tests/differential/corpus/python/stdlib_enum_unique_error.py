from enum import Enum, unique


@unique
class Dup(Enum):
    A = 1
    B = 1
