import asyncio
import sys


async def main():
    print("about to exit")
    await asyncio.sleep(0)
    sys.exit(4)


asyncio.run(main())
