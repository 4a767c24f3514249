import asyncio


async def phase(name, start):
    await start.wait()
    print(name, "started")


async def main():
    start = asyncio.Event()
    tasks = [asyncio.create_task(phase(f"t{i}", start)) for i in range(3)]
    await asyncio.sleep(0)
    start.set()
    await asyncio.wait(tasks)
    print("all phases")


asyncio.run(main())
