import asyncio


async def job(i):
    await asyncio.sleep(0.001)
    if i == 2:
        raise KeyError(f"missing {i}")
    return i


async def main():
    async with asyncio.TaskGroup() as tg:
        for i in range(4):
            tg.create_task(job(i))


asyncio.run(main())
