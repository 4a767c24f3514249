import asyncio


class Connection:
    def __init__(self, name):
        self.name = name

    async def __aenter__(self):
        print("open", self.name)
        return self

    async def __aexit__(self, exc_type, exc, tb):
        print("close", self.name, exc_type.__name__ if exc_type else None)
        return False


async def main():
    async with Connection("db") as conn:
        print("using", conn.name)
    try:
        async with Connection("cache"):
            raise ValueError("boom")
    except ValueError as e:
        print("handled", e)


asyncio.run(main())
