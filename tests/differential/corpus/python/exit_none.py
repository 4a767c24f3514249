import sys

print("before")
sys.exit()
