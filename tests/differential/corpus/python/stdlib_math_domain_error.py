import math

print(math.sqrt(16))
print(math.sqrt(-1))
