"""A TypeScript hello against a JavaScript one, through warm Runtimes.

    .venv/bin/python bench/typescript.py [--repeat N] [--pause-ms MS] [--rounds R]

One Runtime (the default pool) runs ``console.log("hi"); return 42`` written
in JavaScript and the same with a type annotation in TypeScript, taking
turns run by run, ``--pause-ms`` apart (0: back to back); each language has
a pool of its own. Prints the median and range of each language per round,
and the ratio of the medians (TypeScript / JavaScript).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import tether

PROGRAMS = {
    "javascript": 'console.log("hi");\nreturn 42;',
    "typescript": 'const greeting: string = "hi";\nconsole.log(greeting);\nreturn 42 as number;',
}


async def round_(repeat: int, pause: float) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {language: [] for language in PROGRAMS}
    async with tether.Runtime() as rt:
        for language, source in PROGRAMS.items():  # each pool started, its first run left out
            await rt.run(source, language=language)
        for _ in range(repeat):
            for language, source in PROGRAMS.items():
                await asyncio.sleep(pause)
                start = time.perf_counter()
                result = await rt.run(source, language=language)
                times[language].append(time.perf_counter() - start)
                if result.value != 42 or result.output != "hi\n":
                    raise AssertionError(f"{language}: {result.status} {result.error}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--pause-ms", type=float, default=0.0)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    print("| round | JavaScript ms (median, range) | TypeScript ms (median, range) | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for index in range(args.rounds):
        times = asyncio.run(round_(args.repeat, args.pause_ms / 1e3))
        cells = []
        for language in PROGRAMS:
            ms = [t * 1e3 for t in times[language]]
            cells.append(f"{statistics.median(ms):.1f} ({min(ms):.1f}-{max(ms):.1f})")
        ratio = statistics.median(times["typescript"]) / statistics.median(times["javascript"])
        print(f"| {index + 1} | {cells[0]} | {cells[1]} | {ratio:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
