import sys

print("to stdout")
print("to stderr", file=sys.stderr)
sys.stderr.write("direct stderr write\n")
print("stdout again")
