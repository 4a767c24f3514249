import os

print("start")
status = os.system("echo from the shell")
print("status", status)
