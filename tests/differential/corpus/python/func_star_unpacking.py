first, *middle, last = range(8)
print(first, middle, last)
(a, b), c = (1, 2), 3
print(a, b, c)
head, *_ = "hello"
print(head)
merged = {**{"a": 1}, **{"b": 2, "a": 3}}
print(merged, [*"ab", *range(2)])
