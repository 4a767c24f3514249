import asyncio
async def main():
    await asyncio.sleep(0)
    return 5
result = asyncio.run(main())
print(result)
