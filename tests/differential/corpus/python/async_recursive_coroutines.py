import asyncio


async def fib(n):
    if n < 2:
        return n
    a, b = await asyncio.gather(fib(n - 1), fib(n - 2))
    return a + b


print(asyncio.run(fib(10)))
