import asyncio


async def main():
    try:
        print("work")
        await asyncio.sleep(0)
        raise RuntimeError("failed midway")
    finally:
        print("cleanup runs")


asyncio.run(main())
