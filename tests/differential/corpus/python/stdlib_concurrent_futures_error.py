from concurrent.futures import ThreadPoolExecutor


def risky(n):
    if n == 2:
        raise ValueError(f"bad item {n}")
    return n


with ThreadPoolExecutor() as pool:
    print(list(pool.map(risky, range(4))))
