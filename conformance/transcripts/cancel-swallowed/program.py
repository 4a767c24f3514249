import asyncio
try:
    await hang()
except asyncio.CancelledError:
    return 'swallowed'
