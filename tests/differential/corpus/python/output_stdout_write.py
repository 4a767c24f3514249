import sys

n = sys.stdout.write("written directly\n")
print("write returned", n)
sys.stdout.write("no newline at the end")
