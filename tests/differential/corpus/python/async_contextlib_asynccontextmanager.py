import asyncio
from contextlib import asynccontextmanager


@asynccontextmanager
async def session(name):
    print("enter", name)
    try:
        yield name.upper()
    finally:
        print("exit", name)


async def main():
    async with session("alpha") as s:
        print("inside", s)


asyncio.run(main())
