import asyncio
return await asyncio.gather(add(1, 2), add(3, 4), add(5, 6))
