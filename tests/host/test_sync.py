"""The blocking API: SyncRuntime from plain threads."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from tether import Limits, PoolConfig, SyncRuntime


def test_a_run_with_a_sync_and_an_async_binding() -> None:
    async def add(a: int, b: int) -> int:
        return a + b

    def scale(x: int) -> int:
        return 10 * x

    with SyncRuntime(pool=PoolConfig(size=1)) as rt:
        result = rt.run("return await scale(await add(1, 2))",
                        bindings={"add": add, "scale": scale})
    assert result.ok, result.error
    assert result.value == 30


def test_two_threads_at_once() -> None:
    started = threading.Barrier(2)

    def wait_for_the_other() -> str:
        started.wait(timeout=10)  # both runs are in flight at the same time
        return threading.current_thread().name

    results: dict[int, Any] = {}
    with SyncRuntime(pool=PoolConfig(size=2)) as rt:
        def work(n: int) -> None:
            results[n] = rt.run(f"await meet()\nreturn {n}", bindings={"meet": wait_for_the_other})

        threads = [threading.Thread(target=work, args=(n,)) for n in (1, 2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
    assert {n: r.value for n, r in results.items()} == {1: 1, 2: 2}


def test_the_same_arguments_and_result_as_runtime_run() -> None:
    with SyncRuntime(pool=None) as rt:
        result = rt.run("n += 1\nn", variables={"n": 1}, last_expression=True,
                        language="python", limits=Limits(timeout=5))
    assert result.value == 2 and result.variables == {"n": 2}
    bad = SyncRuntime(pool=None)
    try:
        with pytest.raises(ValueError):
            bad.run("", language="cobol")
    finally:
        bad.close()


def test_closing_ends_a_run_still_going_and_refuses_new_ones() -> None:
    rt = SyncRuntime(pool=None)
    outcome: list[Any] = []
    thread = threading.Thread(target=lambda: outcome.append(
        rt.run("import time\ntime.sleep(30)")))
    thread.start()
    time.sleep(0.5)  # let the run start; the result does not depend on it
    rt.close()
    thread.join(timeout=30)
    assert outcome and outcome[0].status == "cancelled"
    with pytest.raises(RuntimeError, match="closed"):
        rt.run("return 1")
    rt.close()  # again: nothing


def test_a_sync_runtime_cannot_be_used_from_its_own_loop() -> None:
    with SyncRuntime(pool=None) as rt:
        def nested() -> Any:  # a sync binding runs in a thread: a run of its own works
            return rt.run("return 1").value

        async def from_the_loop() -> Any:
            return rt.run("return 1")

        result = rt.run("return await inner()", bindings={"inner": from_the_loop})
        assert result.error is not None and "own loop" in result.error.message
        assert rt.run("return await f()", bindings={"f": nested}).value == 1


def test_a_blocking_session_threads_the_variables() -> None:
    with SyncRuntime(pool=PoolConfig(size=1)) as rt, rt.session() as s:
        s.run("n = 20")
        s.run("n = n * 2")
        assert s.run("n + 2", last_expression=True).value == 42
        assert s.save() == {"n": 40} and len(s.results) == 3


def test_a_sync_runtime_streams_and_resumes() -> None:
    from tether import Suspend, SyncRuntime

    def later() -> str:
        raise Suspend("tomorrow")

    events: list[object] = []
    with SyncRuntime(pool=None) as rt:
        first = rt.run("print('a')\nreturn await later()", bindings=[later],
                       suspendable=True, on_event=events.append)
        assert first.status == "suspended" and first.checkpoint is not None
        assert rt.resume(first.checkpoint, 7, bindings=[later]).value == 7
    assert events
