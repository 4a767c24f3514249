import gzip
import zlib

data = b"repeat " * 100
compressed = zlib.compress(data)
print(len(data), len(compressed) < len(data), zlib.decompress(compressed) == data)
print(zlib.crc32(b"hello"), zlib.adler32(b"hello"))
print(gzip.decompress(gzip.compress(b"payload")))
