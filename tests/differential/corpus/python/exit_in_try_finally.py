import sys

try:
    print("trying")
    sys.exit(3)
finally:
    print("finally still runs")
