import asyncio


async def slow():
    await asyncio.sleep(5)
    return "late"


async def main():
    try:
        await asyncio.wait_for(slow(), timeout=0.05)
    except asyncio.TimeoutError:
        print("timed out")


asyncio.run(main())
