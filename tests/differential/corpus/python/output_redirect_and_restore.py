import io
import sys

saved = sys.stdout
sys.stdout = io.StringIO()
print("hidden")
captured = sys.stdout.getvalue()
sys.stdout = saved
print("captured:", captured.strip())
sys.stdout = sys.__stdout__
print("restored to __stdout__")
