from concurrent.futures import ThreadPoolExecutor, as_completed


def square(n):
    return n * n


with ThreadPoolExecutor(max_workers=4) as pool:
    print(list(pool.map(square, range(8))))
    futures = {pool.submit(square, n): n for n in (3, 4)}
    print(sorted(f.result() for f in as_completed(futures)))
