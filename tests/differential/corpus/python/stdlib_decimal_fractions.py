from decimal import ROUND_HALF_UP, Decimal, getcontext
from fractions import Fraction

print(Decimal("0.1") + Decimal("0.2"), 0.1 + 0.2)
print(Decimal("2.675").quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
getcontext().prec = 6
print(Decimal(1) / Decimal(7))
print(Fraction(1, 3) + Fraction(1, 6), Fraction("0.75"), Fraction(3.5).limit_denominator())
