import sys

for i in range(3):
    print(f"warning {i}", file=sys.stderr)
