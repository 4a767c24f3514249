"""tether benchmark: prints a table and writes bench/results.json.

    make bench                    # or: .venv/bin/python bench/run.py [--repeat N]

Every workload runs through the public API (``Runtime.run``), each run in a
guest of its own: "cold" starts the guest at the run (no pool), "warm" takes
one the pool started before. The baseline column does the same work by spawning
``python -c`` (or ``node -e``) by hand and reading its stdout, the way ad-hoc "run the
model's code" helpers do; the ratio is tether's median over the baseline's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import resource
import shutil
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tether import Limits, PoolConfig, Runtime

HERE = Path(__file__).resolve().parent


async def echo(x: Any) -> Any:
    return x


# name: {language: (tether program, baseline program for `python -c` / `node -e`)}
WORKLOADS: dict[str, dict[str, tuple[str, str]]] = {
    "hello": {
        "python": ("print('hello')\nreturn 42", "print('hello'); print(42)"),
        "javascript": ("console.log('hello')\nreturn 42", "console.log('hello'); console.log(42)"),
    },
    "100 sequential calls": {
        "python": ("x = 0\nfor i in range(100):\n    x = await echo(i)\nreturn x",
                   "x = 0\nfor i in range(100):\n    x = i\nprint(x)"),
        "javascript": ("let x = 0\nfor (let i = 0; i < 100; i++) x = await echo(i)\nreturn x",
                       "let x = 0; for (let i = 0; i < 100; i++) x = i; console.log(x)"),
    },
    "100 concurrent calls": {
        "python": (
            "import asyncio\nreturn len(await asyncio.gather(*(echo(i) for i in range(100))))",
            "import asyncio\nasync def e(i): return i\n"
            "async def m(): return await asyncio.gather(*(e(i) for i in range(100)))\n"
            "print(len(asyncio.run(m())))",
        ),
        "javascript": (
            "return (await Promise.all([...Array(100).keys()].map((i) => echo(i)))).length",
            "Promise.all([...Array(100).keys()].map(async (i) => i))"
            ".then((r) => console.log(r.length))",
        ),
    },
    "1 MB string result": {
        "python": ("return 'x' * (1 << 20)", "print('x' * (1 << 20))"),
        "javascript": ("return 'x'.repeat(1 << 20)", "console.log('x'.repeat(1 << 20))"),
    },
    "10,000 small dicts": {
        "python": (
            "return [{'id': i, 'name': f'item{i}', 'ok': True} for i in range(10_000)]",
            "import json\nprint(json.dumps([{'id': i, 'name': f'item{i}', 'ok': True} "
            "for i in range(10_000)]))",
        ),
        "javascript": (
            "return [...Array(10000).keys()].map((i) => ({id: i, name: `item${i}`, ok: true}))",
            "console.log(JSON.stringify([...Array(10000).keys()]"
            ".map((i) => ({id: i, name: `item${i}`, ok: true}))))",
        ),
    },
    "CPU loop (sum of squares to 10^6)": {
        "python": ("return sum(i * i for i in range(10**6))",
                   "print(sum(i * i for i in range(10**6)))"),
        "javascript": ("let s = 0\nfor (let i = 0; i < 1e6; i++) s += i * i\nreturn s",
                       "let s = 0; for (let i = 0; i < 1e6; i++) s += i * i; console.log(s)"),
    },
}


async def _timed(repeat: int, once: Callable[[], Awaitable[None]], pause: float = 0.0
                 ) -> list[float]:
    await once()  # warm the page cache and the host's imports
    samples = []
    for _ in range(repeat):
        if pause:
            await asyncio.sleep(pause)  # lets a warm pool refill, as between agent steps
        start = time.perf_counter()
        await once()
        samples.append(time.perf_counter() - start)
    return samples


NODE = shutil.which("node") or "node"


async def _baseline(language: str, code: str) -> None:
    argv = ([sys.executable, "-I", "-S", "-c", code] if language == "python"
            else [NODE, "-e", code])
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL, env={},
    )
    await proc.communicate()


async def _workloads(repeat: int, rows: list[dict[str, Any]]) -> None:
    limits = Limits(timeout=60)
    pool = PoolConfig(size=2, prestart=("python", "javascript"))
    async with Runtime(limits=limits, pool=None) as cold, \
            Runtime(limits=limits, pool=pool) as warm:
        await asyncio.sleep(1.0)
        for name, variants in WORKLOADS.items():
            for language, (program, baseline) in variants.items():
                async def run_baseline(language: str = language, baseline: str = baseline) -> None:
                    await _baseline(language, baseline)

                theirs = await _timed(repeat, run_baseline)
                for mode, rt in (("cold", cold), ("warm", warm)):
                    async def run_once(program: str = program, language: str = language,
                                       rt: Runtime = rt) -> None:
                        result = await rt.run(program, language=language, bindings=[echo])
                        assert result.ok, result.error

                    ours = await _timed(repeat, run_once, pause=0.15 if mode == "warm" else 0)
                    rows.append(_row(f"{name} [{language}, {mode}]", ours, theirs))


async def _load(runs: int, callers: int, pool_size: int) -> dict[str, Any]:
    """``runs`` hello runs from ``callers`` concurrent callers through one Runtime."""
    latencies: list[float] = []
    async with Runtime(pool=PoolConfig(size=pool_size, prestart=("python",))) as rt:
        await asyncio.sleep(1.0)
        queue = iter(range(runs))

        async def caller() -> None:
            for _ in queue:
                start = time.perf_counter()
                result = await rt.run("print('hello')\nreturn 42")
                assert result.ok, result.error
                latencies.append(time.perf_counter() - start)

        start = time.perf_counter()
        await asyncio.gather(*(caller() for _ in range(callers)))
        elapsed = time.perf_counter() - start
    latencies.sort()
    return {
        "workload": f"{runs} hello runs, {callers} callers, pool of {pool_size}",
        "runs_per_s": runs / elapsed,
        "p50_ms": latencies[len(latencies) // 2] * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
        "peak_host_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--load-runs", type=int, default=1000)
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    await _workloads(args.repeat, rows)
    _print(rows)
    load = await _load(args.load_runs, 20, 4)
    print(f"\n{load['workload']}: {load['runs_per_s']:.0f} runs/s, p50 {load['p50_ms']:.1f} ms, "
          f"p99 {load['p99_ms']:.1f} ms, peak host RSS {load['peak_host_rss_mb']:.0f} MB")
    report = {"python": platform.python_version(), "machine": platform.machine(), "rows": rows,
              "load": load}
    (HERE / "results.json").write_text(json.dumps(report, indent=1) + "\n")


def _row(name: str, ours: list[float], theirs: list[float]) -> dict[str, Any]:
    median = statistics.median(ours) * 1000
    base = statistics.median(theirs) * 1000
    return {
        "workload": name,
        "median_ms": median,
        "p90_ms": statistics.quantiles(ours, n=10)[-1] * 1000 if len(ours) > 1 else median,
        "baseline_ms": base,
        "ratio": median / base,
    }


def _print(rows: list[dict[str, Any]]) -> None:
    header = f"{'workload':54} {'median ms':>10} {'p90 ms':>8} {'baseline ms':>12} {'ratio':>6}"
    print(header)
    print("-" * len(header))
    for r in rows:
        extra = ""
        print(f"{r['workload']:54} {r['median_ms']:10.1f} {r['p90_ms']:8.1f} "
              f"{r['baseline_ms']:12.1f} {r['ratio']:6.2f}{extra}")


if __name__ == "__main__":
    asyncio.run(main())
