import subprocess

subprocess.run(["sh", "-c", "exit 2"], check=True)
