import asyncio


async def forgotten():
    return 1


async def main():
    forgotten()
    print("main done")


asyncio.run(main())
