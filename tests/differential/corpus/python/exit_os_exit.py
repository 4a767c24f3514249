import os

print("before os._exit", flush=True)
os._exit(0)
