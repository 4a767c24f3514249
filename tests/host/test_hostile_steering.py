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

from tether import RunResult, Runtime, SyncRuntime

from .conftest import pick, quick

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
