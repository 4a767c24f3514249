import asyncio


async def gather_all(n):
    return await asyncio.gather(*(asyncio.sleep(0, result=i) for i in range(n)))


def run_sync(n):
    return asyncio.run(gather_all(n))


print(run_sync(4))
