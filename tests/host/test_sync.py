"""The blocking API: SyncRuntime from plain threads."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tether import Limits, PoolConfig, SyncRuntime

from .conftest import MARKER, marked_process_alive

pytestmark = pytest.mark.memory_guest


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


def test_it_takes_every_argument_the_runtime_takes() -> None:
    """state.md: ``SyncRuntime`` takes the Runtime's arguments."""
    import inspect

    from tether import RunSession, Runtime, SyncRunSession

    def parameters(f: object) -> object:
        return inspect.signature(f).parameters  # type: ignore[arg-type]

    assert parameters(SyncRuntime) == parameters(Runtime)
    for method in ("run", "resume", "session"):
        assert parameters(getattr(SyncRuntime, method)) == parameters(getattr(Runtime, method))
    assert parameters(SyncRunSession.run) == parameters(RunSession.run)
    with SyncRuntime(pool=PoolConfig(size=0), check=True, approve=None) as rt:
        assert rt.runtime.check_before_run
        assert rt.run("return 1").value == 1


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


class Interrupted(BaseException):
    """What SIGINT raises in these tests (KeyboardInterrupt, without
    stopping pytest if it escaped)."""


@pytest.fixture
def interrupt() -> Iterator[Callable[[float], None]]:
    """``interrupt(after)``: SIGINT to this process ``after`` seconds after
    a process marked with MARKER runs."""
    def raise_interrupted(signum: int, frame: object) -> None:
        raise Interrupted

    threads: list[threading.Thread] = []

    def arm(after: float) -> None:
        def interrupt() -> None:
            deadline = time.monotonic() + 20
            while not marked_process_alive():
                if time.monotonic() > deadline:
                    return
                time.sleep(0.01)
            time.sleep(after)
            os.kill(os.getpid(), signal.SIGINT)

        threads.append(threading.Thread(target=interrupt))
        threads[-1].start()

    previous = signal.signal(signal.SIGINT, raise_interrupted)
    try:
        yield arm
    finally:
        for thread in threads:
            thread.join()
        signal.signal(signal.SIGINT, previous)


#: A run that leaves a process marked with MARKER; both ignore SIGTERM, so
#: ending them takes the run's whole kill_grace.
_MARKED_SLEEP = f"""
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "{MARKER}"])
time.sleep(30)
"""


def test_an_interrupted_run_is_ended_before_the_interrupt_goes_on(
        interrupt: Callable[[float], None]) -> None:
    with SyncRuntime(pool=None) as rt:
        interrupt(0)
        with pytest.raises(Interrupted):
            rt.run(_MARKED_SLEEP, limits=Limits(timeout=25, kill_grace=0.2))
        assert not marked_process_alive(), "the run goes on"
        assert rt.run("return 1").value == 1


def test_an_interrupted_close_still_ends_everything(interrupt: Callable[[float], None]) -> None:
    rt = SyncRuntime(pool=None)
    thread = threading.Thread(target=lambda: rt.run(
        _MARKED_SLEEP, limits=Limits(timeout=25, kill_grace=2)))
    thread.start()
    while not marked_process_alive():
        time.sleep(0.01)
    interrupt(0.5)  # while the close waits out the run's kill_grace
    with pytest.raises(Interrupted):
        rt.close()
    assert not marked_process_alive(), "the close was cut short"
    thread.join(timeout=30)
