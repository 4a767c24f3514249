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
import functools
import subprocess
import sys
import textwrap
import threading
from typing import Any

import cbor2
import pytest

from tether import (
    Allow,
    ApprovalRequest,
    CallStarted,
    EventsDropped,
    Limits,
    RunResult,
    Runtime,
    Status,
    Suspend,
    SyncRuntime,
    requires_approval,
)
from tether.host.run import checkpoints
from tether.host.run.checkpoints import CheckpointError

from .conftest import _Shared, pick, quick, runtime_for

pytestmark = pytest.mark.memory_guest


def _within(coroutine: Any, seconds: float = 60) -> Any:
    """``coroutine`` on the session's loop; a run that never ends fails the
    test instead of hanging the suite."""
    assert _Shared.loop is not None
    return _Shared.loop.run_until_complete(asyncio.wait_for(coroutine, seconds))


def _runtime(language: str = "python") -> Runtime:
    return runtime_for(language)


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
    result = _within(_runtime(lang).run(program, language=lang, bindings=[wipe],
                                    approve=slow_person,
                                    limits=quick(timeout=1, approval_pause=1)))
    assert result.status == Status.TIMEOUT, result.error
    assert result.error is not None and "stood still for approvals" in result.error.message


def test_one_approval_longer_than_the_pause_ends_in_a_timeout(lang: str) -> None:
    result = _within(_runtime(lang).run("return await wipe()", language=lang, bindings=[wipe],
                                    approve=away,
                                    limits=quick(timeout=0.5, approval_pause=0.5)), 30)
    assert result.status == Status.TIMEOUT, result.error


@pytest.mark.real_guest  # the guest's CPU limit
def test_a_program_computing_while_an_approval_waits_meets_its_cpu_limit(lang: str) -> None:
    """The clock stands still for the approval; the program's CPU time does
    not (``cpu_seconds``: ``timeout`` + 1 by default)."""
    program = pick(lang, python="import asyncio\nasyncio.ensure_future(wipe())\n"
                                "await asyncio.sleep(0.1)\nwhile True:\n    pass",
                   javascript="wipe()\nawait new Promise((r) => setTimeout(r, 100))\n"
                              "while (true) {}")
    result = _within(_runtime(lang).run(program, language=lang, bindings=[wipe], approve=away,
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


# -- checkpoints: a store that alters them, or forges them ---------------------------

#: The key the tests' own Runtimes seal with, so that a test can seal what
#: only a holder of the key could: checkpoints whose fields are wrong.
KEY = bytes(range(32))


def ask_manager(question: str) -> str:
    raise Suspend(f"waiting for an answer to {question!r}")


def _suspended(source: str, **options: Any) -> bytes:
    first = _within(_runtime().run(source, bindings=[ask_manager], suspendable=True, **options))
    assert first.status == Status.SUSPENDED and first.checkpoint is not None, first.error
    return first.checkpoint


async def _resume(checkpoint: bytes, key: Any = KEY, **options: Any) -> RunResult:
    """Resumed by a Runtime of its own, given ``key`` (None: none, so the process's)."""
    async with Runtime(pool=None, **({} if key is None else {"checkpoint_key": key})) as rt:
        return await rt.resume(checkpoint, "yes", bindings=[ask_manager], **options)


def test_a_checkpoint_its_store_altered_is_refused() -> None:
    """Read as they came, the bytes said what the run would do on resume:
    the store could give it another program (or other limits)."""
    checkpoint = _suspended("answer = await ask_manager('go?')\nreturn 'original'")
    altered = checkpoint.replace(b"'original'", b"'tampered'")
    assert altered != checkpoint
    with pytest.raises(CheckpointError, match="MAC"):
        asyncio.run(_resume(altered, key=None))


def test_resume_runs_under_the_hosts_limits_never_the_checkpoints() -> None:
    """Suspended under generous limits, resumed under tight ones: the
    resumed run has the resuming host's, as given to resume or the Runtime's."""
    checkpoint = _suspended("answer = await ask_manager('go?')\nimport time\ntime.sleep(5)\n"
                            "return answer", limits=Limits(timeout=60))

    async def in_a_tight_runtime() -> RunResult:
        async with Runtime(pool=None, limits=quick(timeout=1)) as rt:
            return await rt.resume(checkpoint, "yes", bindings=[ask_manager])

    assert asyncio.run(in_a_tight_runtime()).status == Status.TIMEOUT
    given = asyncio.run(_resume(checkpoint, key=None, limits=quick(timeout=1)))
    assert given.status == Status.TIMEOUT, given.error
    hungry = _suspended("answer = await ask_manager('go?')\nb = bytearray(300 * 2**20)\n"
                        "return len(b)", limits=Limits(memory_bytes=2**31))
    small = asyncio.run(_resume(hungry, key=None, limits=quick(memory_bytes=128 * 2**20)))
    assert small.status in (Status.ERROR, Status.LIMIT), small
    assert small.error is not None and "MemoryError" in small.error.type + small.error.message


def test_resumes_own_value_must_fit_the_limits() -> None:
    """It answers the suspended call: a RESULT the guest must accept."""
    checkpoint = _suspended("return await ask_manager('?')")

    async def resume(value: Any) -> RunResult:
        async with Runtime(pool=None) as rt:
            return await rt.resume(checkpoint, value, bindings=[ask_manager],
                                   limits=quick(value_bytes=65_536))

    with pytest.raises(ValueError, match="value_bytes"):
        asyncio.run(resume("x" * 100_000))
    with pytest.raises(TypeError, match="value model"):
        asyncio.run(resume(object()))
    assert asyncio.run(resume("x" * 1000)).value == "x" * 1000


def _shared_reference_bomb(levels: int) -> Any:
    value: Any = [0]
    for _ in range(levels):
        value = [value, value]
    return value


def _sealed(body: Any, key: bytes = KEY, *, raw: bytes | None = None) -> bytes:
    """A format-3 checkpoint of ``body`` (or of the bytes ``raw``) sealed with ``key``."""
    encoded = raw if raw is not None else cbor2.dumps(body)
    return cbor2.dumps({"tether_checkpoint": 3, "body": encoded,
                        "mac": checkpoints._mac(key, encoded)})


def _body(**changes: Any) -> dict[str, Any]:
    body = {"source": "return await ask_manager('?')", "language": "python",
            "bindings": ["ask_manager"], "variables": None, "last_expression": False,
            "calls": [{"name": "ask_manager", "args": ["?"], "kwargs": {},
                       "suspended": True}],
            "reason": "later"}
    body.update(changes)
    return body


def _call(**fields: Any) -> dict[str, Any]:
    return {"name": "ask_manager", "args": ["?"], "kwargs": {}, **fields}


def test_a_checkpoint_that_expands_when_decoded_is_refused_unread() -> None:
    """812 bytes of shared references (CBOR tags 28/29) made 2**22 leaves
    and held the event loop for seconds. Unsealed, nothing of it is
    decoded; sealed (by a holder of the key), the strict decoder refuses
    its tags."""
    bomb = cbor2.dumps(_body(variables={"x": _shared_reference_bomb(22)}), value_sharing=True)
    assert len(bomb) < 1000
    unsealed = cbor2.dumps({"tether_checkpoint": 3, "body": bomb, "mac": bytes(32)})
    with pytest.raises(CheckpointError, match="MAC"):
        asyncio.run(_resume(unsealed))
    with pytest.raises(CheckpointError, match="tag 28"):
        asyncio.run(_resume(_sealed(None, raw=bomb)))


SEALED_BUT_WRONG = {
    "not a map": [1, 2],
    "a field missing": {k: v for k, v in _body().items() if k != "calls"},
    "limits of its own": _body(limits={"timeout": 10**6}),
    "source not text": _body(source=b"return 1"),
    "an unknown language": _body(language="cobol"),
    "bindings not names": _body(bindings=[{"name": "ask_manager"}]),
    "a binding twice": _body(bindings=["ask_manager", "ask_manager"]),
    "variables not a map": _body(variables=[1]),
    "a variable's bad name": _body(variables={"bad name": 1}),
    "a variable named as a binding": _body(variables={"ask_manager": 1}),
    "last_expression not a bool": _body(last_expression=1),
    "calls not a list": _body(calls={"0": _call(suspended=True)}),
    "a call not a map": _body(calls=["ask_manager"]),
    "a call's args not a list": _body(calls=[_call(args={"0": "?"}, suspended=True)]),
    "a call's kwargs not a map": _body(calls=[_call(kwargs=[], suspended=True)]),
    "a call of no binding": _body(calls=[{"name": "rm", "args": [], "kwargs": {},
                                          "suspended": True}]),
    "no suspending call": _body(calls=[_call(value=1)]),
    "two suspending calls": _body(calls=[_call(suspended=True), _call(suspended=True)]),
    "suspended false": _body(calls=[_call(suspended=False), _call(suspended=True)]),
    "a value and an error": _body(calls=[
        _call(value=1, error={"code": 100, "type": "E", "message": ""}), _call(suspended=True)]),
    "a connection error's code": _body(calls=[
        _call(error={"code": 5, "type": "E", "message": ""}), _call(suspended=True)]),
    "an unknown error code": _body(calls=[
        _call(error={"code": 999, "type": "E", "message": ""}), _call(suspended=True)]),
    "an error of unknown keys": _body(calls=[
        _call(error={"code": 100, "type": "E", "message": "", "x": 1}), _call(suspended=True)]),
    "an answer nested too deeply": _body(calls=[
        _call(value=functools.reduce(lambda v, _: [v], range(65), 0)),
        _call(suspended=True)]),
    "an answer over value_bytes": _body(calls=[_call(value="x" * 100_000),
                                               _call(suspended=True)]),
}


@pytest.mark.parametrize("body", SEALED_BUT_WRONG.values(), ids=SEALED_BUT_WRONG.keys())
def test_a_sealed_checkpoint_with_a_wrong_field_is_a_checkpoint_error(body: Any) -> None:
    """Each surfaced later, if at all: as protocol_error or InternalError
    blamed on the guest, or as a ValueError or TypeError of Python's."""
    with pytest.raises(CheckpointError):
        asyncio.run(_resume(_sealed(body), limits=quick(value_bytes=65_536)))


@pytest.mark.parametrize("raw", [
    cbor2.dumps(_body()) + b"\x00",
    b"\xb9\x00\x07" + cbor2.dumps(_body())[1:],
    cbor2.dumps(_body(calls=[_call(value=1.5), _call(suspended=True)])),
    cbor2.dumps(_body(calls=[_call(value={1: "not text"}), _call(suspended=True)])),
], ids=["trailing bytes", "a map's length in its long form", "a float in 64 bits",
        "a key that is no text"])
def test_a_sealed_body_that_is_not_strict_cbor_is_refused(raw: bytes) -> None:
    with pytest.raises(CheckpointError):
        asyncio.run(_resume(_sealed(None, raw=raw)))


def test_a_checkpoint_larger_than_checkpoint_bytes_is_refused_unread() -> None:
    checkpoint = _sealed(_body(source="return await ask_manager('?')" + " " * 100_000))
    with pytest.raises(CheckpointError, match="checkpoint_bytes"):
        asyncio.run(_resume(checkpoint, limits=quick(checkpoint_bytes=50_000)))
    assert asyncio.run(_resume(checkpoint)).value == "yes"


def test_a_checkpoint_resumes_in_another_process_given_the_key_only() -> None:
    """The key's life: whoever keeps it resumes the checkpoints, in any
    process; a Runtime given another key, or none, refuses them; a key
    being rotated out still opens them."""
    writer = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import asyncio, sys
        from tether import Runtime, Suspend
        def ask_manager(question: str) -> str:
            raise Suspend("later")
        async def main() -> None:
            async with Runtime(pool=None, checkpoint_key={KEY!r}) as rt:
                result = await rt.run("return await ask_manager('?')",
                                      bindings=[ask_manager], suspendable=True)
            sys.stdout.write(result.checkpoint.hex())
        asyncio.run(main())
    """)], capture_output=True, text=True, timeout=120, check=True)
    checkpoint = bytes.fromhex(writer.stdout)
    assert asyncio.run(_resume(checkpoint)).value == "yes"
    assert asyncio.run(_resume(checkpoint, key=[bytes(32), KEY])).value == "yes"
    with pytest.raises(CheckpointError, match="another checkpoint_key"):
        asyncio.run(_resume(checkpoint, key=bytes(32)))
    with pytest.raises(CheckpointError, match="this process's own"):
        asyncio.run(_resume(checkpoint, key=None))


@pytest.mark.parametrize("key", [b"short", "a text of thirty-two characters!", [], [KEY, 1]])
def test_a_checkpoint_key_is_bytes_of_at_least_32(key: Any) -> None:
    with pytest.raises(ValueError, match="checkpoint_key"):
        Runtime(pool=None, checkpoint_key=key)


# -- what a program produces, held for a lagging consumer or a checkpoint ------------


def test_a_lagging_stream_holds_a_bounded_number_of_bytes(lang: str) -> None:
    """300 calls of 4 MiB with a lagging consumer pinned 1.2 GB of the
    host's memory: the buffer held 1,024 events, whatever they carried. It
    holds ``buffer_bytes`` (16 MiB by default) of them now, the rest
    dropped and counted."""
    go, all_in = asyncio.Event(), asyncio.Event()
    seen = 0

    async def begin() -> None:
        await go.wait()

    async def sink(data: str) -> None:
        nonlocal seen
        seen += 1
        if seen == 40:
            all_in.set()

    program = pick(lang, python="await begin()\nx = 'a' * (1 << 20)\nfor i in range(40):\n"
                                "    await sink(x)\nreturn 'done'",
                   javascript="await begin()\nconst x = 'a'.repeat(1 << 20)\n"
                              "for (let i = 0; i < 40; i++) await sink(x)\nreturn 'done'")

    async def consume() -> list[Any]:
        items = []
        stream = _runtime(lang).stream(program, language=lang, bindings=[begin, sink],
                                   limits=quick(timeout=60))
        items.append(await anext(stream))  # CallStarted(begin): the program waits for go
        go.set()
        await all_in.wait()  # every call was made while the consumer lagged
        items.extend([item async for item in stream])
        return items

    items = _within(consume())
    result, events = items[-1], items[:-1]
    assert (result.status, result.value) == (Status.OK, "done"), result.error
    held = sum(len(e.args[0]) for e in events if isinstance(e, CallStarted) and e.name == "sink")
    assert held <= 16 * 2**20
    dropped = sum(e.count for e in events if isinstance(e, EventsDropped))
    assert dropped > 0
    assert len([e for e in events if not isinstance(e, EventsDropped)]) + dropped == 82


def test_an_event_larger_than_the_buffer_is_dropped_and_counted() -> None:
    async def echo(data: str) -> int:
        return len(data)

    async def consume() -> list[Any]:
        return [item async for item in _runtime().stream(
            "await echo('x' * 10_000)\nreturn await echo('y')", bindings=[echo],
            buffer_bytes=4096)]

    items = _within(consume())
    assert items[-1].value == 1
    started = [e for e in items if isinstance(e, CallStarted)]
    assert [e.args for e in started] == [["y"]]
    assert sum(e.count for e in items if isinstance(e, EventsDropped)) == 1
    assert all(e.size > 0 for e in started)


def sink(data: str) -> int:
    return len(data)


def test_a_suspendable_runs_call_log_is_bounded_in_bytes(lang: str) -> None:
    """Every call's arguments and answer were kept until the run ended. Past
    ``checkpoint_bytes`` the log lets go of them and a Suspend fails its
    call: the run goes on, no longer suspendable."""
    program = pick(lang, python="x = 'a' * (1 << 18)\nfor i in range(8):\n    await sink(x)\n"
                                "try:\n    await ask_manager('?')\n"
                                "except BindingError as e:\n    return [e.type, str(e)]",
                   javascript="const x = 'a'.repeat(1 << 18)\n"
                              "for (let i = 0; i < 8; i++) await sink(x)\n"
                              "try { await ask_manager('?') } catch (e) "
                              "{ return [e.type, e.message] }")
    result = _within(_runtime(lang).run(program, language=lang, bindings=[sink, ask_manager],
                                    suspendable=True, limits=quick(checkpoint_bytes=2**20)))
    assert result.status == Status.OK, result.error
    assert result.value[0] == "Suspend" and "checkpoint_bytes" in result.value[1]


def test_a_checkpoint_larger_than_checkpoint_bytes_is_not_made() -> None:
    """The source and variables count too: a Suspend fails its call."""
    program = "# " + "x" * 100_000 + "\ntry:\n    await ask_manager('?')\n" \
              "except BindingError as e:\n    return [e.type, str(e)]"
    result = _within(_runtime().run(program, bindings=[ask_manager], suspendable=True,
                                    limits=quick(checkpoint_bytes=50_000)))
    assert result.value[0] == "Suspend" and "would take" in result.value[1]
