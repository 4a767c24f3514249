import subprocess

print("before")
subprocess.run(["echo", "from a child process"])
print("after")
