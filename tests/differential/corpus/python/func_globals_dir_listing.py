import math

value = 3


def helper():
    pass


names = [n for n in dir() if not n.startswith("_")]
print(names)
print("math" in globals(), callable(globals()["helper"]))
