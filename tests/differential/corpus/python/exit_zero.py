import sys

print("exiting cleanly")
sys.exit(0)
print("never printed")
