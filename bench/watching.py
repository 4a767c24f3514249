"""What watching a run costs: bench/run.py's "100 sequential calls" on warm
guests (wall time, and the host's CPU time per run), with nothing switched
on, with an ``on_event`` callback, with every call asking an approval hook
that allows it, and traced (where the ``otel`` extra is installed).

    .venv/bin/python bench/watching.py [--repeat N] [--only off]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable
from typing import Any

from tether import Limits, Runtime

PROGRAMS = {
    "python": "x = 0\nfor i in range(100):\n    x = await echo(i)\nreturn x",
    "javascript": "let x = 0\nfor (let i = 0; i < 100; i++) x = await echo(i)\nreturn x",
}


async def echo(x: Any) -> Any:
    return x


async def allow(request: Any) -> Any:
    import tether

    return tether.Allow()


def modes() -> dict[str, Callable[[], tuple[dict[str, Any], dict[str, Any]]]]:
    """Each mode: (Runtime options, run options)."""
    def off() -> tuple[dict[str, Any], dict[str, Any]]:
        return {}, {"bindings": {"echo": echo}}

    def events() -> tuple[dict[str, Any], dict[str, Any]]:
        seen: list[Any] = []
        return {}, {"bindings": {"echo": echo}, "on_event": seen.append}

    def approvals() -> tuple[dict[str, Any], dict[str, Any]]:
        from tether import requires_approval

        @requires_approval
        async def echo(x: Any) -> Any:
            return x

        return {}, {"bindings": {"echo": echo}, "approve": allow}

    def traced() -> tuple[dict[str, Any], dict[str, Any]]:
        from tether.host.tracing import Tracing

        return {"tracing": Tracing()}, {"bindings": {"echo": echo}}

    return {"off": off, "events": events, "approvals": approvals, "traced": traced}


async def measure(mode: str, language: str,
                  repeat: int) -> tuple[list[float], list[float]]:
    """Wall time of each run, and the host process's CPU time in it (the
    host's share of the per-call cost, less disturbed by a loaded machine)."""
    runtime_options, run_options = modes()[mode]()
    async with Runtime(limits=Limits(), **runtime_options) as rt:
        for _ in range(3):  # warm the pool and the caches
            await rt.run(PROGRAMS[language], language=language, **run_options)
        times, cpu = [], []
        for _ in range(repeat):
            started, cpu_started = time.perf_counter(), time.process_time()
            result = await rt.run(PROGRAMS[language], language=language, **run_options)
            times.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - cpu_started) * 1000)
            assert result.value == 99, result
        return times, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--only", action="append")
    args = parser.parse_args()
    for mode in args.only or list(modes()):
        for language in PROGRAMS:
            try:
                times, cpu = asyncio.run(measure(mode, language, args.repeat))
            except ImportError as exc:
                print(f"{mode:10} {language:10} skipped: {exc}")
                continue
            q = statistics.quantiles(times, n=4)
            print(f"{mode:10} {language:10} median {statistics.median(times):6.2f} ms"
                  f"  IQR {q[0]:.2f}-{q[2]:.2f}; host CPU median "
                  f"{statistics.median(cpu):5.2f} ms")


if __name__ == "__main__":
    main()
