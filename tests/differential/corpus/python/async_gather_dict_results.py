import asyncio


async def price(symbol):
    await asyncio.sleep(0)
    return {"AAA": 10.5, "BBB": 20.25, "CCC": 3.0}[symbol]


async def main():
    symbols = ["AAA", "BBB", "CCC"]
    prices = dict(zip(symbols, await asyncio.gather(*map(price, symbols))))
    print(prices)
    print(f"total: {sum(prices.values()):.2f}")


asyncio.run(main())
