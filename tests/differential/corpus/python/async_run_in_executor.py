import asyncio
from concurrent.futures import ThreadPoolExecutor


def work(x):
    return sum(range(x))


async def main():
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(max_workers=2) as pool:
        values = await asyncio.gather(*(loop.run_in_executor(pool, work, n) for n in (10, 100, 1000)))
    print(values)


asyncio.run(main())
