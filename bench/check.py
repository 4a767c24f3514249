"""Benchmark of the check before a run: ``Runtime.check`` of a hello
program and of a 30-line one, per language, cold (the first check of a new
Runtime) and warm, with checks spaced as a model's round trips space them
and back to back.

    .venv/bin/python bench/check.py [--repeat N] [--sandbox PROFILE]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Literal

from tether import Runtime


async def search(query: str, limit: int = 3, *,
                 mode: Literal["any", "all"] = "any") -> list[str]:
    return []


PYTHON = "".join(f"v{i} = await search('q{i}', {i % 5 + 1})\nprint(len(v{i}))\n"
                 for i in range(15))
SCRIPT = "".join(f"const v{i} = await search('q{i}', {i % 5 + 1});\nconsole.log(v{i}.length);\n"
                 for i in range(15))
PROGRAMS = {"python": ("print('hello')", PYTHON),
            "typescript": ("console.log('hello')", SCRIPT),
            "javascript": ("console.log('hello')", SCRIPT)}
#: Between spaced checks (a model's round trip is longer still).
GAP = 0.2


async def timed(rt: Runtime, source: str, language: str) -> float:
    start = time.perf_counter()
    found = await rt.check(source, language=language, bindings={"search": search})
    took = time.perf_counter() - start
    assert len(found) == 0 and getattr(found, "checked", True), found
    return took * 1000


async def main(repeat: int, sandbox: str) -> None:
    print("check before a run (ms; medians, p90 in brackets):")
    for language, (hello, thirty) in PROGRAMS.items():
        for label, source in (("hello", hello), ("30 lines", thirty)):
            async with Runtime(pool=None, sandbox=sandbox) as rt:
                cold = await timed(rt, source, language)
                spaced, back_to_back = [], []
                for _ in range(repeat):
                    await asyncio.sleep(GAP)
                    spaced.append(await timed(rt, source, language))
                for _ in range(repeat):
                    back_to_back.append(await timed(rt, source, language))
            print(f"  {language:10} {label:9} cold {cold:7.1f}   spaced "
                  f"{statistics.median(spaced):6.1f} [{sorted(spaced)[repeat * 9 // 10]:6.1f}]"
                  f"   back to back {statistics.median(back_to_back):6.1f} "
                  f"[{sorted(back_to_back)[repeat * 9 // 10]:6.1f}]", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()
    asyncio.run(main(args.repeat, args.sandbox))
