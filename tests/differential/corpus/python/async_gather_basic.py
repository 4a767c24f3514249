import asyncio


async def worker(name, delay):
    await asyncio.sleep(delay)
    print(f"{name} finished")
    return name.upper()


async def main():
    results = await asyncio.gather(worker("a", 0.3), worker("b", 0.1), worker("c", 0.2))
    print(results)


asyncio.run(main())
