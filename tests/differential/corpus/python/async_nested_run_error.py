import asyncio


async def inner():
    return 1


async def outer():
    return asyncio.run(inner())


asyncio.run(outer())
