"""tether.integrations.ray on a real local Ray cluster (ray.init, 2 CPUs, 2
workers): many runs spread over the workers, bindings imported on the
workers and served from one actor, a timeout, a crash, and a worker killed
mid-batch whose runs come back as failures.

Run by test_ray.py in a pytest of its own: a Ray driver keeps descriptors
open after ray.shutdown(), which the suite's leak check would count."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install tether[ray])")

from tether import Limits, Status  # noqa: E402
from tether.integrations.ray import RayRunner, RunJob  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BINDINGS = {"double": "tests.integrations.ray_bindings:double",
            "die": "tests.integrations.ray_bindings:die"}


def test_a_run_on_no_cluster_is_refused() -> None:
    if ray.is_initialized():
        pytest.skip("a cluster is connected")
    with pytest.raises(RuntimeError, match=r"ray\.init"):
        RayRunner(1)


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's socket paths
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=temp,
             runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
    try:
        yield
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def runner(cluster: None) -> Iterator[RayRunner]:
    calls: list[int] = []

    def tally(x: int) -> int:
        """How many calls the one serving actor has had, this one included."""
        calls.append(x)
        return len(calls)

    # Half a CPU each: this runner and the next test's fit the 2 CPUs together.
    with RayRunner(2, bindings=BINDINGS, served={"tally": tally}, num_cpus=0.5) as runner:
        yield runner


def test_many_runs_come_back_in_order(runner: RayRunner) -> None:
    jobs = [RunJob("return await double(n)", variables={"n": n}) for n in range(50)]
    results = runner.run_many(jobs)
    assert [r.status for r in results] == [Status.OK] * 50, [r.error for r in results]
    assert [r.value for r in results] == [2 * n for n in range(50)]


def test_a_served_binding_is_one_actor_for_every_worker(runner: RayRunner) -> None:
    results = runner.run_many(["return await tally(1)"] * 10)
    assert all(r.ok for r in results), [r.error for r in results]
    counts: list[Any] = [r.value for r in results]
    # Each call counted once, in one place: ten consecutive counts.
    assert sorted(counts) == list(range(min(counts), min(counts) + 10))


def test_a_served_bindings_error_reaches_the_program(runner: RayRunner) -> None:
    [result] = runner.run_many(["try:\n    await tally('x', 'y')\nexcept Exception as e:\n"
                                "    return type(e).__name__"])
    assert result.ok and result.value in ("BindingError", "TypeError"), result


def test_timeouts_and_crashes_are_results(runner: RayRunner) -> None:
    timeout, crash, fine = runner.run_many([
        RunJob("while True:\n    pass", limits=Limits(timeout=1)),
        RunJob("import os\nos._exit(3)"),
        RunJob("return 'still here'"),
    ])
    assert timeout.status is Status.TIMEOUT
    assert crash.status is Status.CRASHED
    assert fine.ok and fine.value == "still here"


def test_a_worker_killed_mid_batch_loses_no_run(cluster: None) -> None:
    with RayRunner(2, bindings=BINDINGS, concurrency=2, num_cpus=0.5) as runner:
        jobs = [RunJob("return await double(n)", variables={"n": n}) for n in range(20)]
        jobs[5] = RunJob("await die()")
        results = runner.run_many(jobs)
        assert len(results) == 20
        assert results[5].status is Status.CRASHED
        assert results[5].error is not None and "Ray worker" in results[5].error.message
        for n, result in enumerate(results):
            assert result.status in (Status.OK, Status.CRASHED), result
            if result.ok:
                assert result.value == 2 * n
        assert sum(r.ok for r in results) >= 20 - 2 * 2  # only the dead worker's runs in flight
        assert runner.run_many(["return 1"] * 4)[-1].value == 1  # the worker came back




def test_a_job_run_refuses_is_an_error_result_and_the_batch_goes_on(runner: RayRunner) -> None:
    """A variable outside the value model: Runtime.run refuses that job
    (ValueError); run_many gives it an ``error`` result with the exception's
    type and message, and runs the others."""
    first, refused, last = runner.run_many(
        ["return 1", RunJob("return x", variables={"x": {1, 2}}), "return 3"])
    assert (first.value, last.value) == (1, 3)
    assert refused.status is Status.ERROR
    assert refused.error is not None and refused.error.type == "ValueError"
    assert "value model" in refused.error.message
