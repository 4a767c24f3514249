import asyncio


async def main():
    value = await asyncio.sleep(0.001, result="slept")
    print(value)


asyncio.run(main())
