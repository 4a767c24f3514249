import asyncio


async def step(n):
    await asyncio.sleep(0)
    return n + 1


with asyncio.Runner() as runner:
    a = runner.run(step(1))
    b = runner.run(step(a))
print(a, b)
