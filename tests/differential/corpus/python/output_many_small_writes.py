import sys

for i in range(500):
    sys.stdout.write(str(i % 10))
sys.stdout.write("\n")
for i in range(200):
    print(i, end=",")
print()
