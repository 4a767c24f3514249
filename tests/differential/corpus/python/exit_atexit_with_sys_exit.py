import atexit
import sys

atexit.register(lambda: print("atexit after sys.exit"))
print("body")
sys.exit(2)
