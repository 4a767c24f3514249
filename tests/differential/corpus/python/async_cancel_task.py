import asyncio


async def forever():
    try:
        while True:
            await asyncio.sleep(0.01)
    except asyncio.CancelledError:
        print("cancelled cleanly")
        raise


async def main():
    task = asyncio.create_task(forever())
    await asyncio.sleep(0.03)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        print("main saw cancellation")


asyncio.run(main())
