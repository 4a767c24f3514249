import sys

print("error condition")
sys.exit(1)
