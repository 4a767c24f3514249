import asyncio


async def job(x):
    await asyncio.sleep(0)
    return x * 10


print(asyncio.run(job(1)))
print(asyncio.run(job(2)))
