import threading

results = []
lock = threading.Lock()


def work(n):
    value = sum(range(n))
    with lock:
        results.append((n, value))


threads = [threading.Thread(target=work, args=(n,)) for n in (10, 100, 1000)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(sorted(results))
