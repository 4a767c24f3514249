import sys

data = sys.stdin.read()
print("read", len(data), "chars")
