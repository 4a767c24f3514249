import asyncio

active = 0
peak = 0


async def limited(sem, i):
    global active, peak
    async with sem:
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.005)
        active -= 1
    return i


async def main():
    sem = asyncio.Semaphore(3)
    results = await asyncio.gather(*(limited(sem, i) for i in range(10)))
    print(results, "peak", peak)


asyncio.run(main())
