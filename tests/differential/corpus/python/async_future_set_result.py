import asyncio


async def main():
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    loop.call_later(0.01, fut.set_result, "resolved")
    print(await fut)


asyncio.run(main())
