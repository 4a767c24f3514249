n = 1234567
print(format(n, ","), format(n, "_"), format(3.14159, ".3f"), format(0.5, "%"))
print(str(12).rjust(5, "0"), bin(10), oct(8), hex(255), int("ff", 16), int("0b101", 0))
