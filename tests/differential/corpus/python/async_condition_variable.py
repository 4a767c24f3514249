import asyncio


async def consumer(cond, items):
    async with cond:
        await cond.wait_for(lambda: items)
        print("consumed", items.pop())


async def producer(cond, items):
    await asyncio.sleep(0.001)
    async with cond:
        items.append("payload")
        cond.notify()


async def main():
    cond = asyncio.Condition()
    items = []
    await asyncio.gather(consumer(cond, items), producer(cond, items))


asyncio.run(main())
