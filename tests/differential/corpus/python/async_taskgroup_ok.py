import asyncio


async def square(x):
    await asyncio.sleep(0.001 * x)
    return x * x


async def main():
    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(square(i)) for i in range(6)]
    print([t.result() for t in tasks])


asyncio.run(main())
