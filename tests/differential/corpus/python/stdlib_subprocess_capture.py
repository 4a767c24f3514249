import subprocess

result = subprocess.run(["echo", "captured"], capture_output=True, text=True)
print(repr(result.stdout), result.returncode)
r2 = subprocess.run(["sh", "-c", "echo err >&2; exit 3"], capture_output=True, text=True)
print(repr(r2.stderr), r2.returncode)
