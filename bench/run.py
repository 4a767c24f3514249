"""tether benchmark: prints tables and writes bench/results.json.

    make bench                    # or: .venv/bin/python bench/run.py [--repeat N] [--load-runs N]

Every workload runs through the public API (``Runtime.run``), each run in a
guest of its own, in three modes: "cold" starts a new interpreter at the run
(``pool=None``), "forked" forks a Python guest from the runtime's template at
the run (``PoolConfig(size=0)``; JavaScript has no fork server, so it is the
same as cold there and is not repeated), "warm" takes a guest that was ready
before the run (the default pool). The baseline column does the same work by
spawning ``python -c`` (or ``node -e``) by hand and reading its stdout, the way
ad-hoc "run the model's code" helpers do; the ratio is tether's median over
the baseline's. Then: bursts of 20 concurrent runs, sustained load under
several configurations, and the floors of this machine that bound the rest.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import shutil
import socket
import statistics
import sys
import time
import warnings
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


MODES = {
    "cold": None,
    "forked": PoolConfig(size=0),
    "warm": PoolConfig(size=2, prestart=("python", "javascript")),
}


async def _workloads(repeat: int, rows: list[dict[str, Any]]) -> None:
    limits = Limits(timeout=60)
    runtimes = {mode: Runtime(limits=limits, pool=pool) for mode, pool in MODES.items()}
    for rt in runtimes.values():
        await rt.__aenter__()
    try:
        await asyncio.sleep(1.0)
        for name, variants in WORKLOADS.items():
            for language, (program, baseline) in variants.items():
                async def run_baseline(language: str = language, baseline: str = baseline) -> None:
                    await _baseline(language, baseline)

                theirs = await _timed(repeat, run_baseline)
                for mode, rt in runtimes.items():
                    if mode == "forked" and language != "python":
                        continue

                    async def run_once(program: str = program, language: str = language,
                                       rt: Runtime = rt) -> None:
                        result = await rt.run(program, language=language, bindings=[echo])
                        assert result.ok, result.error

                    ours = await _timed(repeat, run_once, pause=0.15 if mode == "warm" else 0)
                    rows.append(_row(f"{name} [{language}, {mode}]", ours, theirs))
    finally:
        for rt in runtimes.values():
            await rt.aclose()


async def _bursts(repeat: int) -> list[dict[str, Any]]:
    """20 hello runs at once (an agent fanning out), per language and mode."""
    out = []
    for language in ("python", "javascript"):
        for mode, pool in MODES.items():
            if mode == "forked" and language != "python":
                continue
            async with Runtime(pool=pool) as rt:
                await asyncio.sleep(0.5)

                async def burst(rt: Runtime = rt, language: str = language) -> None:
                    program = WORKLOADS["hello"][language][0]
                    results = await asyncio.gather(*(
                        rt.run(program, language=language) for _ in range(20)))
                    assert all(r.ok for r in results)

                samples = await _timed(max(3, repeat // 4), burst, pause=0.5)
                median = statistics.median(samples)
                out.append({"workload": f"20 concurrent hello runs [{language}, {mode}]",
                            "median_ms": median * 1000, "runs_per_s": 20 / median})
    return out


async def _load(runs: int, callers: int, pool: PoolConfig, sandbox: str) -> dict[str, Any]:
    """``runs`` hello runs from ``callers`` concurrent callers through one Runtime."""
    latencies: list[float] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the process profile as root
        rt = Runtime(pool=pool, sandbox=sandbox)
    async with rt:
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
    server = "fork server" if pool.fork_server else "spawned guests"
    return {
        "workload": f"{runs} runs, {callers} callers, pool of {pool.size}, {server}, "
                    f"{rt.sandbox}",
        "runs_per_s": runs / elapsed,
        "p50_ms": latencies[len(latencies) // 2] * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
        "peak_host_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


async def _floors() -> dict[str, float]:
    """What this machine allows at best: the round trip between an asyncio
    process and a blocking one (a binding call can only cost more), the
    first round trip to a freshly forked process after 60 ms asleep (a warm
    guest's RUN pays it: the scheduler, not tether), and how much slower the
    same work runs right after a pause."""
    a, b = socket.socketpair()
    count = 2000
    pid = os.fork()
    if pid == 0:
        a.close()
        for _ in range(count + 1):
            b.send(b.recv(64))
        os._exit(0)
    b.close()

    async def pings() -> float:
        loop = asyncio.get_running_loop()
        a.setblocking(False)
        await loop.sock_sendall(a, b"x" * 20)
        await loop.sock_recv(a, 64)
        start = time.perf_counter()
        for _ in range(count):
            await loop.sock_sendall(a, b"x" * 20)
            await loop.sock_recv(a, 64)
        return (time.perf_counter() - start) / count

    round_trip = await pings()
    a.close()
    os.waitpid(pid, 0)
    wakes = []
    for _ in range(15):
        a, b = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            b.send(b.recv(64))
            os._exit(0)
        time.sleep(0.06)
        start = time.perf_counter()
        a.send(b"x")
        a.recv(64)
        wakes.append(time.perf_counter() - start)
        os.waitpid(pid, 0)
        a.close()
        b.close()
    # The same small piece of work back to back and after 150 ms asleep (as a
    # warm guest and the host are between an agent's steps): on a VM, caches
    # and TLBs are cold again after a pause, and the first milliseconds of
    # every process run several times slower.
    hot, rested = [], []
    for i in range(30):
        if i >= 15:
            time.sleep(0.15)
        start = time.perf_counter()
        compile(f"x = {i}\nprint(x)", "<bench>", "exec")
        (rested if i >= 15 else hot).append(time.perf_counter() - start)
    return {"asyncio_round_trip_us": round_trip * 1e6,
            "forked_wake_round_trip_us": statistics.median(wakes) * 1e6,
            "compile_hot_us": statistics.median(hot[5:]) * 1e6,
            "compile_after_pause_us": statistics.median(rested) * 1e6}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--load-runs", type=int, default=1000)
    args = parser.parse_args()
    floors = await _floors()
    rows: list[dict[str, Any]] = []
    await _workloads(args.repeat, rows)
    _print(rows)
    bursts = await _bursts(args.repeat)
    print()
    for b in bursts:
        print(f"{b['workload']:54} {b['median_ms']:10.1f} ms   {b['runs_per_s']:6.0f} runs/s")
    loads = [await _load(args.load_runs, 20, PoolConfig(size=4), "auto"),
             await _load(args.load_runs, 20, PoolConfig(size=4), "process"),
             await _load(max(100, args.load_runs // 5), 20,
                         PoolConfig(size=4, fork_server=False), "auto")]
    print()
    for load in loads:
        print(f"{load['workload']}: {load['runs_per_s']:.0f} runs/s, p50 {load['p50_ms']:.1f} ms, "
              f"p99 {load['p99_ms']:.1f} ms, peak host RSS {load['peak_host_rss_mb']:.0f} MB")
    print(f"\nfloors: asyncio <-> blocking round trip {floors['asyncio_round_trip_us']:.0f} us; "
          f"first round trip to a forked process after 60 ms asleep "
          f"{floors['forked_wake_round_trip_us']:.0f} us; compiling a two-line program "
          f"{floors['compile_hot_us']:.0f} us back to back, "
          f"{floors['compile_after_pause_us']:.0f} us after 150 ms asleep")
    report = {"python": platform.python_version(), "machine": platform.machine(), "rows": rows,
              "bursts": bursts, "load": loads, "floors": floors}
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
