import asyncio


async def main():
    loop = asyncio.get_running_loop()
    order = []
    loop.call_soon(order.append, 1)
    loop.call_soon(order.append, 2)
    await asyncio.sleep(0)
    order.append(3)
    print(order)


asyncio.run(main())
