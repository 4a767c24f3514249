import asyncio
a = asyncio.ensure_future(echo(1))
b = asyncio.ensure_future(add(1, 2))
await asyncio.sleep(0.1)
print('waiting')
return [await a, await b]
