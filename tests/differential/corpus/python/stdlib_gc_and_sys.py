import sys

print(sys.version_info >= (3, 8), type(sys.maxsize), sys.byteorder in ("little", "big"))
print(sys.getsizeof(0) > 0, sys.platform.startswith("linux"))
print(sys.float_info.dig, sys.int_info.bits_per_digit in (15, 30))
