from functools import partial, reduce
from operator import mul

power_of_two = partial(pow, 2)
print([power_of_two(i) for i in range(6)])
print(reduce(mul, range(1, 8)))
print(reduce(lambda acc, s: acc + len(s), ["ab", "cde", "f"], 0))
