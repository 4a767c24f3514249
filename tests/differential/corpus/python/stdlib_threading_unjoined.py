import threading
import time


def late():
    time.sleep(0.05)
    print("thread finished after main")


threading.Thread(target=late).start()
print("main done")
