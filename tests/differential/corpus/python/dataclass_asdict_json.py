import json
from dataclasses import asdict, dataclass


@dataclass
class Address:
    city: str
    zip: str


@dataclass
class Person:
    name: str
    age: int
    address: Address


person = Person("Ann", 34, Address("Oslo", "0150"))
print(json.dumps(asdict(person), indent=2))
