print(b"bytes value", bytearray(b"ab"), b"\x00\xff")
print(str(b"abc"), b"abc".decode())
