async def ask():
    return await hang()

await ask()
