import struct

packed = struct.pack("<IhQ?", 1, -2, 2 ** 40, True)
print(packed.hex(), len(packed), struct.calcsize("<IhQ?"))
print(struct.unpack("<IhQ?", packed))
print(int.from_bytes(b"\x01\x00", "little"), (258).to_bytes(2, "big"))
