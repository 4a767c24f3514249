import asyncio


async def tick(label, times):
    for i in range(times):
        print(label, i)
        await asyncio.sleep(0)
    return label


async def main():
    t1 = asyncio.create_task(tick("x", 3))
    t2 = asyncio.create_task(tick("y", 2))
    print(await t1, await t2)


asyncio.run(main())
