import asyncio


async def main():
    print("starting")
    await asyncio.sleep(0.01)
    print("done")


asyncio.run(main())
