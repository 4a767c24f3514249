import asyncio


async def important():
    await asyncio.sleep(0.3)
    print("important done")
    return 1


async def main():
    task = asyncio.create_task(important())
    try:
        await asyncio.wait_for(asyncio.shield(task), 0.01)
    except TimeoutError:
        print("timed out, but")
    print(await task)


asyncio.run(main())
