import sys

for i in range(5):
    print(f"out {i}")
    print(f"err {i}", file=sys.stderr)
