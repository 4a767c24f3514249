import asyncio


async def main():
    await asyncio.sleep(0)
    return "from loop"


loop = asyncio.new_event_loop()
try:
    print(loop.run_until_complete(main()))
finally:
    loop.close()
