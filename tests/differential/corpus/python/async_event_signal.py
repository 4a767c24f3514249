import asyncio


async def waiter(event, name):
    await event.wait()
    print(name, "woke")


async def main():
    event = asyncio.Event()
    tasks = [asyncio.create_task(waiter(event, n)) for n in "abc"]
    await asyncio.sleep(0.01)
    print("setting")
    event.set()
    await asyncio.gather(*tasks)


asyncio.run(main())
