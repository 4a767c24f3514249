import inspect


def scale(values: list[float], factor: float = 2.0) -> list[float]:
    return [v * factor for v in values]


print(scale.__annotations__)
print(inspect.signature(scale))
print(scale([1.0, 2.5]))
