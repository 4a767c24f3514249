import asyncio


async def job(i):
    await asyncio.sleep(0)
    if i % 2:
        raise ValueError(i)
    return i


async def main():
    try:
        async with asyncio.TaskGroup() as tg:
            for i in range(5):
                tg.create_task(job(i))
    except* ValueError as group:
        print("caught", sorted(e.args[0] for e in group.exceptions))


asyncio.run(main())
