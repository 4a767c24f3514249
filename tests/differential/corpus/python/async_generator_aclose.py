import asyncio


async def stream():
    try:
        for i in range(10):
            yield i
            await asyncio.sleep(0)
    finally:
        print("stream closed")


async def main():
    async for x in stream():
        if x == 2:
            break
        print(x)
    await asyncio.sleep(0)
    print("loop left")


asyncio.run(main())
