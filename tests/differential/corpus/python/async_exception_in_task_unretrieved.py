import asyncio


async def fail():
    raise ValueError("nobody awaits me")


async def main():
    asyncio.create_task(fail())
    await asyncio.sleep(0.01)
    print("main ends")


asyncio.run(main())
print("after run")
