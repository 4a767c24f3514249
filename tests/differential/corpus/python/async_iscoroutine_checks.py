import asyncio
import inspect


async def f():
    return 1


coro = f()
print(asyncio.iscoroutine(coro), inspect.iscoroutinefunction(f))
print(asyncio.run(coro))
