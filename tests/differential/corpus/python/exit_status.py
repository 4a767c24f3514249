import sys
print("partial")
sys.exit(3)
