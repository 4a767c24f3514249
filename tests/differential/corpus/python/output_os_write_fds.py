import os

print("print one")
os.write(1, b"os.write to fd 1\n")
print("print two")
os.write(2, b"os.write to fd 2\n")
