import asyncio

counter = 0


async def bump(lock):
    global counter
    for _ in range(100):
        async with lock:
            value = counter
            await asyncio.sleep(0)
            counter = value + 1


async def main():
    lock = asyncio.Lock()
    await asyncio.gather(*(bump(lock) for _ in range(5)))
    print("counter", counter)


asyncio.run(main())
