import asyncio


async def main():
    loop = asyncio.get_running_loop()
    start = loop.time()
    await asyncio.sleep(0.01)
    print("elapsed positive:", loop.time() - start > 0)


asyncio.run(main())
