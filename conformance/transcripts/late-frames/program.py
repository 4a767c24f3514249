import asyncio
asyncio.ensure_future(add(1, 2))
await asyncio.sleep(0.1)
raise TypeError('ended')
