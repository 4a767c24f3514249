import os, subprocess
print("a")
os.write(1, b"b\n")
subprocess.run(["echo", "c"])
print("d")
