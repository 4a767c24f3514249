from decimal import Decimal

print(Decimal("12.5"))
print(Decimal("twelve"))
