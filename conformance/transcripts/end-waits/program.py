import threading, time
total = await add(1, 2)
threading.Thread(target=lambda: (time.sleep(0.1), print('sum', total))).start()
