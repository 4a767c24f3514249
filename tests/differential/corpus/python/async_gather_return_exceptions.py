import asyncio


async def risky(n):
    await asyncio.sleep(0)
    if n % 2:
        raise ValueError(f"odd value {n}")
    return n


async def main():
    results = await asyncio.gather(*(risky(i) for i in range(5)), return_exceptions=True)
    for r in results:
        print(type(r).__name__, r)


asyncio.run(main())
