import queue
import threading

q = queue.Queue()
out = []


def consumer():
    while (item := q.get()) is not None:
        out.append(item * 2)
        q.task_done()
    q.task_done()


t = threading.Thread(target=consumer)
t.start()
for i in range(5):
    q.put(i)
q.put(None)
q.join()
t.join()
print(out)
