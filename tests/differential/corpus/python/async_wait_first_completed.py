import asyncio


async def job(delay, name):
    await asyncio.sleep(delay)
    return name


async def main():
    tasks = {asyncio.create_task(job(5, "slow")), asyncio.create_task(job(0.001, "fast"))}
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    print([t.result() for t in done])
    for t in pending:
        t.cancel()
    print(len(pending), "cancelled")


asyncio.run(main())
