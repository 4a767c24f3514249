import subprocess
import sys

subprocess.run(["echo", "through sys.stdout"], stdout=sys.stdout)
print("parent")
