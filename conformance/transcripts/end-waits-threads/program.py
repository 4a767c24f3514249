import threading, time
threading.Thread(target=lambda: (time.sleep(0.2), print('from a thread'))).start()
