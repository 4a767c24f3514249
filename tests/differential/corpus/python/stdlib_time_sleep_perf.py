import time

start = time.perf_counter()
time.sleep(0.02)
elapsed = time.perf_counter() - start
print("slept at least 20ms:", elapsed >= 0.02)
print(time.gmtime(0).tm_year, time.strftime("%Y", time.gmtime(86400 * 365)))
