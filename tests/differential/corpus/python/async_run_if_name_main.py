import asyncio


async def fetch(n):
    await asyncio.sleep(0)
    return n * 2


async def main():
    results = [await fetch(i) for i in range(5)]
    print("results:", results)


if __name__ == "__main__":
    asyncio.run(main())
