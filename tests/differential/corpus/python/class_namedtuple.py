from collections import namedtuple
from typing import NamedTuple

Point = namedtuple("Point", "x y")


class Employee(NamedTuple):
    name: str
    dept: str
    salary: int = 50000


p = Point(1, 2)
e = Employee("ann", "eng")
print(p, p._asdict(), p._replace(x=5))
print(e, e.salary, e._fields)
