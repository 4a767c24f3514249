"""What ``preload`` saves: a warm run whose program imports pandas.

    python bench/preload.py VENV [--repeat N]     # VENV: a virtual environment with pandas

Three numbers, each the median (and the range) over N runs: ``python -c
"import pandas"`` with the venv's interpreter (a fresh process, the way
ad-hoc helpers run code); a warm tether run of ``import pandas; return
pandas.__version__`` with ``python_packages=VENV``, first without preload,
then with ``preload=("pandas",)``; and a warm ``return 1`` for the floor.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from tether import PoolConfig, Runtime

PROGRAM = "import pandas\nreturn pandas.__version__"


async def _timed(repeat: int, one: Callable[[], Awaitable[object]]) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        await one()
        times.append((time.perf_counter() - started) * 1000)
    return times


async def _tether(venv: Path, preload: tuple[str, ...], program: str,
                  repeat: int) -> list[float]:
    async with Runtime(python_packages=venv, preload=preload, pool=PoolConfig(size=2)) as rt:
        for _ in range(3):  # the template and the pool are up, the page cache is warm
            result = await rt.run(program)
            assert result.ok, result.error

        async def one() -> None:
            result = await rt.run(program)
            assert result.ok, result.error
            await asyncio.sleep(0.05)  # the pool refills between runs, as between agent steps

        times = await _timed(repeat, one)
        return [t - 50 for t in times]


async def _baseline(venv: Path, repeat: int) -> list[float]:
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-c", "import pandas"], check=True)

    async def one() -> None:
        await asyncio.to_thread(subprocess.run, [python, "-c", "import pandas"], check=True)

    return await _timed(repeat, one)


def _show(name: str, times: list[float]) -> None:
    print(f"| {name} | {statistics.median(times):.1f} | {min(times):.1f}-{max(times):.1f} |")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("venv", type=Path)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print("| what | median ms | range ms |\n| --- | ---: | ---: |")
    _show('`python -c "import pandas"`', await _baseline(args.venv, args.repeat))
    _show("warm run, `import pandas`, no preload",
          await _tether(args.venv, (), PROGRAM, args.repeat))
    _show('warm run, `import pandas`, `preload=("pandas",)`',
          await _tether(args.venv, ("pandas",), PROGRAM, args.repeat))
    _show("warm run, `return 1` (the floor)", await _tether(args.venv, (), "return 1",
                                                           args.repeat))


if __name__ == "__main__":
    asyncio.run(main())
