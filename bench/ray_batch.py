"""Runs per second over a local Ray cluster against one local Runtime.

    python bench/ray_batch.py [--runs N]      # needs the ray extra

The same N programs (each calls a worker-side binding once) through one
local Runtime with as many runs in flight as a worker has, then through
``tether.integrations.ray`` with 1 and 2 workers on ``ray.init()`` of this
machine (its start and the workers' first runs are outside the timing).
"""

from __future__ import annotations

import argparse
import asyncio
import time

import ray

from tether import Runtime
from tether.demo import add
from tether.integrations.ray import RayRunner, RunJob

PROGRAM = "return await add(n, 1)"
CONCURRENCY = 2


async def _local(runs: int) -> float:
    async with Runtime() as runtime:
        await runtime.run("return 0")
        gate = asyncio.Semaphore(CONCURRENCY)

        async def one(n: int) -> None:
            async with gate:
                result = await runtime.run(PROGRAM, bindings={"add": add}, variables={"n": n})
                assert result.ok, result.error

        started = time.perf_counter()
        await asyncio.gather(*(one(n) for n in range(runs)))
        return runs / (time.perf_counter() - started)


def _ray(runs: int, workers: int) -> float:
    with RayRunner(workers, bindings={"add": "tether.demo:add"}, concurrency=CONCURRENCY,
                   num_cpus=0.5) as runner:
        runner.run_many(["return 0"] * workers * CONCURRENCY)
        started = time.perf_counter()
        results = runner.run_many(RunJob(PROGRAM, variables={"n": n}) for n in range(runs))
        elapsed = time.perf_counter() - started
        assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]
        return runs / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    print(f"one local Runtime: {asyncio.run(_local(args.runs)):.0f} runs/s")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        for workers in (1, 2):
            print(f"Ray, {workers} worker(s): {_ray(args.runs, workers):.0f} runs/s")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
