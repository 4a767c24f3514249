import asyncio


async def load(user_id):
    await asyncio.sleep(0)
    users = {1: "ann", 2: "bob"}
    return users[user_id]


async def main():
    print(await load(1))
    print(await load(3))


asyncio.run(main())
