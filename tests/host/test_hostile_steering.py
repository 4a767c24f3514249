"""The attack suite for what steers a run: approvals, checkpoints, live
streams, and bindings that stop the host.

Each test runs a real guest and attacks what sits between the model's
program and the host: a program that keeps an approval waiting to outlive
its timeout, a store that hands resume altered or hostile checkpoint bytes,
a program whose calls fill a lagging consumer's buffer, a binding that
raises KeyboardInterrupt. The session's leak check adds that nothing was
left behind.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from tether import (
    Allow,
    ApprovalRequest,
    Limits,
    RunResult,
    Runtime,
    Status,
    SyncRuntime,
    requires_approval,
)

from .conftest import _Shared, pick, quick


def _within(coroutine: Any, seconds: float = 60) -> Any:
    """``coroutine`` on the session's loop; a run that never ends fails the
    test instead of hanging the suite."""
    assert _Shared.loop is not None
    return _Shared.loop.run_until_complete(asyncio.wait_for(coroutine, seconds))


def _runtime() -> Runtime:
    assert _Shared.runtime is not None
    return _Shared.runtime


# -- approvals -----------------------------------------------------------------------


@requires_approval
async def wipe() -> str:
    return "wiped"


async def slow_person(request: ApprovalRequest) -> Allow:
    await asyncio.sleep(0.3)
    return Allow()


async def away(request: ApprovalRequest) -> Allow:
    await asyncio.sleep(3600)
    return Allow()


def test_a_program_that_keeps_an_approval_waiting_still_times_out(lang: str) -> None:
    """A new approval-needing call before the last is answered: the clock
    stood still for good while any approval waited. It stands still for
    ``approval_pause`` in all, then the run times out."""
    program = pick(lang, python="import asyncio\nwhile True:\n"
                                "    asyncio.ensure_future(wipe())\n"
                                "    await asyncio.sleep(0.05)",
                   javascript="while (true) {\n  wipe().catch(() => {})\n"
                              "  await new Promise((r) => setTimeout(r, 50))\n}")
    result = _within(_runtime().run(program, language=lang, bindings=[wipe],
                                    approve=slow_person,
                                    limits=quick(timeout=1, approval_pause=1)))
    assert result.status == Status.TIMEOUT, result.error
    assert result.error is not None and "stood still for approvals" in result.error.message


def test_one_approval_longer_than_the_pause_ends_in_a_timeout(lang: str) -> None:
    result = _within(_runtime().run("return await wipe()", language=lang, bindings=[wipe],
                                    approve=away,
                                    limits=quick(timeout=0.5, approval_pause=0.5)), 30)
    assert result.status == Status.TIMEOUT, result.error


def test_a_program_computing_while_an_approval_waits_meets_its_cpu_limit(lang: str) -> None:
    """The clock stands still for the approval; the program's CPU time does
    not (``cpu_seconds``: ``timeout`` + 1 by default)."""
    program = pick(lang, python="import asyncio\nasyncio.ensure_future(wipe())\n"
                                "await asyncio.sleep(0.1)\nwhile True:\n    pass",
                   javascript="wipe()\nawait new Promise((r) => setTimeout(r, 100))\n"
                              "while (true) {}")
    result = _within(_runtime().run(program, language=lang, bindings=[wipe], approve=away,
                                    limits=quick(timeout=1)))
    assert (result.status, result.limit) == (Status.LIMIT, "cpu_seconds"), result.error


def test_approval_pause_is_a_finite_time() -> None:
    assert Limits(approval_pause=0).approval_pause == 0
    for bad in (-1, float("inf"), float("nan"), "1"):
        with pytest.raises(ValueError, match="approval_pause"):
            Limits(approval_pause=bad)  # type: ignore[arg-type]

# -- a binding that stops the host ---------------------------------------------------


async def interrupt() -> None:
    raise KeyboardInterrupt


def exit_now() -> None:
    raise SystemExit(3)


@pytest.mark.parametrize("raised", ["KeyboardInterrupt", "SystemExit"])
def test_a_binding_that_stops_the_host_reaches_the_streams_consumer(lang: str,
                                                                     raised: str) -> None:
    """Raised from the stream's own task, the exit stopped the caller's
    event loop; it reaches the ``async for`` instead, after the run's
    cleanup, and the loop and the Runtime go on."""
    binding = interrupt if raised == "KeyboardInterrupt" else exit_now

    async def go() -> RunResult:
        async with Runtime(pool=None) as rt:
            with pytest.raises((KeyboardInterrupt, SystemExit)) as caught:
                async for _ in rt.stream(pick(lang, python="await stop()",
                                              javascript="await stop()"),
                                         language=lang, bindings={"stop": binding},
                                         limits=quick()):
                    pass
            assert type(caught.value).__name__ == raised
            return await rt.run("return 1", limits=quick())

    try:
        result = asyncio.run(go())
    except (KeyboardInterrupt, SystemExit) as exc:  # not the test run's own to stop
        pytest.fail(f"{type(exc).__name__} escaped the event loop")
    assert result.value == 1


def test_a_binding_that_stops_the_host_reaches_the_sync_caller() -> None:
    """The SyncRuntime's loop thread died of it and the caller waited for
    ever; the exit reaches the caller's thread, and the SyncRuntime goes on."""
    outcome: list[Any] = []

    def call() -> None:
        with SyncRuntime(pool=None) as rt:
            try:
                rt.run("await stop()", bindings={"stop": exit_now}, limits=quick())
            except SystemExit as exc:
                outcome.append(exc.code)
            outcome.append(rt.run("return 2", limits=quick()).value)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    caller.join(60)
    assert not caller.is_alive(), "the caller still waits for its run"
    assert outcome == [3, 2]
