import asyncio


async def countdown(n):
    while n > 0:
        yield n
        await asyncio.sleep(0)
        n -= 1


async def main():
    async for value in countdown(4):
        print("value", value)
    print([v async for v in countdown(3)])


asyncio.run(main())
