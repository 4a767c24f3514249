import asyncio
try:
    await hang()
except asyncio.CancelledError:
    await hang()
