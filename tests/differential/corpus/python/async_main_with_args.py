import asyncio
import sys


async def main(argv):
    print("args:", argv[1:])
    return 0


sys.exit(asyncio.run(main(sys.argv)))
