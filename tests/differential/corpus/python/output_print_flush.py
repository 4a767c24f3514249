import time

for i in range(3):
    print(f"step {i}", flush=True)
    time.sleep(0.001)
print("done", flush=True)
