import sys
import threading


def worker():
    sys.exit(3)


t = threading.Thread(target=worker)
t.start()
t.join()
print("main thread continues")
