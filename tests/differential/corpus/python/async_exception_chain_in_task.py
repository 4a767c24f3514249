import asyncio


class FetchError(Exception):
    pass


async def fetch(url):
    try:
        raise OSError(f"connection refused: {url}")
    except OSError as e:
        raise FetchError("could not fetch") from e


async def main():
    await fetch("http://example.invalid")


asyncio.run(main())
