import sys

try:
    sys.exit(9)
except SystemExit as e:
    print("caught exit with code", e.code)
print("program goes on")
