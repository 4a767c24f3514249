import asyncio


async def compute():
    await asyncio.sleep(0)
    return {"total": 42, "items": [1, 2, 3]}


result = asyncio.run(compute())
print(result["total"], result["items"])
