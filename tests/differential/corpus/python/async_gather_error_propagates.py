import asyncio


async def ok():
    await asyncio.sleep(0.01)
    return "ok"


async def bad():
    await asyncio.sleep(0)
    raise RuntimeError("service unavailable")


async def main():
    print(await asyncio.gather(ok(), bad()))


asyncio.run(main())
