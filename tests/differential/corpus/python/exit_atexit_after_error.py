import atexit

atexit.register(lambda: print("atexit runs after the error too"))
raise RuntimeError("program failed")
