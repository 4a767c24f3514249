from dataclasses import dataclass


@dataclass
class Animal:
    name: str
    legs: int = 4


@dataclass
class Bird(Animal):
    legs: int = 2
    can_fly: bool = True


print(Animal("cat"), Bird("penguin", can_fly=False))
