import asyncio


async def producer(q):
    for i in range(5):
        await q.put(i)
    await q.put(None)


async def consumer(q):
    total = 0
    while (item := await q.get()) is not None:
        total += item
        print("got", item)
    return total


async def main():
    q = asyncio.Queue()
    _, total = await asyncio.gather(producer(q), consumer(q))
    print("total", total)


asyncio.run(main())
