from dataclasses import dataclass


@dataclass
class Bag:
    items: list = []
