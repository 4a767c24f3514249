import subprocess
import sys

subprocess.run([sys.executable, "-c", "print('child python')"])
subprocess.run(["sh", "-c", "echo to-err >&2"])
print("parent done")
