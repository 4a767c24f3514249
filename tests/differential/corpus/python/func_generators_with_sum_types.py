print(sum([0.1] * 10), sum([0.1] * 10) == 1.0)
print(round(2.675, 2), round(0.5), round(1.5), round(-0.5))
print(7 // 2, -7 // 2, 7 % 3, -7 % 3, divmod(-7, 2))
print(2 ** 100, 10 / 4, 1e16 + 1, float("inf") > 10 ** 300)
