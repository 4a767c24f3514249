import asyncio
import random

random.seed(3)


async def fetch(url):
    await asyncio.sleep(random.random() / 100)
    if "bad" in url:
        raise ConnectionError(f"failed to fetch {url}")
    return {"url": url, "status": 200, "bytes": len(url) * 100}


async def main():
    urls = ["https://a.example/1", "https://bad.example/2", "https://c.example/3"]
    results = await asyncio.gather(*(fetch(u) for u in urls), return_exceptions=True)
    ok = [r for r in results if not isinstance(r, Exception)]
    failed = [str(r) for r in results if isinstance(r, Exception)]
    print(f"{len(ok)} ok, {len(failed)} failed")
    for r in ok:
        print(r["url"], r["bytes"])
    for f in failed:
        print("error:", f)


asyncio.run(main())
