import sys

print("progress: ", end="")
for i in range(5):
    print(".", end="")
sys.stdout.flush()
