import math

print(math.sqrt(2), math.pi, math.e)
print(math.floor(-2.5), math.ceil(-2.5), math.trunc(-2.5))
print(math.gcd(48, 18), math.lcm(4, 6), math.factorial(10), math.comb(10, 3), math.perm(5, 2))
print(math.isclose(0.1 + 0.2, 0.3), math.hypot(3, 4), math.log(100, 10), math.log2(1024))
print(math.inf, -math.inf, math.isnan(math.nan), math.dist((0, 0), (1, 1)))
