import asyncio


async def worker(i):
    try:
        await asyncio.sleep(10)
    finally:
        print("worker", i, "cleaned up")


async def main():
    asyncio.create_task(worker(1))
    await asyncio.sleep(0.01)
    print("main returns, leaving a task")


asyncio.run(main())
