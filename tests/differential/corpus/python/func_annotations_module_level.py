count: int = 3
names: list[str]
print(__annotations__)
