import os
import sys

fd = sys.stdout.fileno()
os.write(fd, b"via fileno\n")
print("fileno is", fd)
