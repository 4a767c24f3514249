import asyncio
import time


def blocking(n):
    time.sleep(0.01)
    return n * n


async def main():
    results = await asyncio.gather(*(asyncio.to_thread(blocking, i) for i in range(4)))
    print(results)


asyncio.run(main())
