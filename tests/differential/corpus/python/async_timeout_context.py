import asyncio


async def main():
    try:
        async with asyncio.timeout(0.02):
            await asyncio.sleep(1)
    except TimeoutError:
        print("timeout hit")
    print("after")


asyncio.run(main())
