import asyncio


async def main():
    await asyncio.sleep(0)
    print("ran on the loop")
    return 7


loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
print(loop.run_until_complete(main()))
loop.close()
