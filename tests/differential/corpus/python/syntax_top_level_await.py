import asyncio

await asyncio.sleep(0)
print("top-level await")
