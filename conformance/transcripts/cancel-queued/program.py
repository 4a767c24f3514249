import asyncio
first = asyncio.ensure_future(hang())
await asyncio.sleep(0)
try:
    await echo(1)
except asyncio.CancelledError:
    print('queued call cancelled')
    raise
