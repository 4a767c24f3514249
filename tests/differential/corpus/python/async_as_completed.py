import asyncio


async def job(n):
    await asyncio.sleep(n / 10)
    return n


async def main():
    order = []
    for fut in asyncio.as_completed([job(3), job(1), job(2)]):
        order.append(await fut)
    print(order)


asyncio.run(main())
