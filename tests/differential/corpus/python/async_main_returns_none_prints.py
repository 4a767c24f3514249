import asyncio


async def main():
    data = {"a": 1, "b": 2}
    for key, value in data.items():
        print(f"{key} -> {value}")


print(asyncio.run(main()))
