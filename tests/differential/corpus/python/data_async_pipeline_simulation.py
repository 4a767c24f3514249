import asyncio
import json

RAW = ['{"id": 1, "v": 10}', '{"id": 2, "v": 20}', 'not json', '{"id": 3, "v": 30}']


async def parse(line):
    await asyncio.sleep(0)
    try:
        return json.loads(line)
    except json.JSONDecodeError as e:
        print(f"skipping bad line: {e.msg}")
        return None


async def main():
    parsed = [p for p in await asyncio.gather(*map(parse, RAW)) if p]
    total = sum(p["v"] for p in parsed)
    print(f"parsed {len(parsed)} records, total {total}")
    return total


if __name__ == "__main__":
    result = asyncio.run(main())
    print("result:", result)
