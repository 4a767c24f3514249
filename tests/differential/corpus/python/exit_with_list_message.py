import sys

sys.exit(["not", "a", "number"])
