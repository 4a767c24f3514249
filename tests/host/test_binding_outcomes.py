"""Whatever a binding does, its call is answered and tether keeps working:
exceptions that are not ``Exception``, values whose conversion fails, sync
bindings stuck for good; and a Runtime refuses a second event loop."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from typing import Any

import pytest

from tether import PoolConfig, RunResult, Runtime, Status

from .conftest import pick, quick, run

pytestmark = pytest.mark.memory_guest

#: The program calls ``bad()``, catches what the call raises, and returns its
#: type; then it calls ``fine()``, to show that the run goes on.
CATCH = {
    "python": "try:\n    await bad()\nexcept BindingError as e:\n"
              "    caught = e.type\nreturn [caught, await fine()]",
    "javascript": "let caught\ntry { await bad() } catch (e) { caught = e.type }\n"
                  "return [caught, await fine()]",
}


def fine() -> str:
    return "still running"


class _Bad(list[int]):
    def __iter__(self) -> Any:
        raise RuntimeError("iterating me fails")


def _raising(exc: BaseException) -> Callable[[], Any]:
    async def bad() -> None:
        raise exc
    return bad


@pytest.mark.parametrize(("raised", "seen"), [
    (GeneratorExit(), "GeneratorExit"),
    (BaseException("bare"), "BaseException"),
    (asyncio.CancelledError(), "CancelledError"),
])
def test_a_binding_raising_a_base_exception_answers_the_call(lang: str, raised: BaseException,
                                                             seen: str) -> None:
    result = run(CATCH[lang], language=lang, bindings={"bad": _raising(raised), "fine": fine},
                 limits=quick(timeout=10))
    assert (result.status, result.value) == (Status.OK, [seen, "still running"]), result.error


#: The program calls ``bad()`` and returns the error's type, its message's
#: length in bytes and first characters, then calls ``fine()``.
MEASURE = {
    "python": "try:\n    await bad()\nexcept BindingError as e:\n"
              "    seen = [e.type, len(e.message.encode()), e.message[:6]]\n"
              "return [seen, await fine()]",
    "javascript": "let seen\ntry { await bad() } catch (e) {\n"
                  "  seen = [e.type, Buffer.byteLength(e.message), e.message.slice(0, 6)]\n}\n"
                  "return [seen, await fine()]",
}


def test_an_error_too_large_for_a_frame_is_cut_to_fit(lang: str) -> None:
    """R-RESULT-6: the call fails with the message cut, never waits for
    an answer that could not be sent."""
    error = ValueError("x" * (3 * 1024 * 1024))
    result = run(MEASURE[lang], language=lang, bindings={"bad": _raising(error), "fine": fine},
                 limits=quick(value_bytes=64 * 1024, frame_bytes=128 * 1024))
    assert result.status == Status.OK, result.error
    (type_, size, start), after = result.value
    assert (type_, start, after) == ("ValueError", "xxxxxx", "still running")
    assert 60 * 1024 < size <= 64 * 1024 + 1024


def test_an_error_that_is_not_valid_text_is_repaired(lang: str) -> None:
    """R-RESULT-6: lone surrogates as U+FFFD; a type name cut to 256 bytes."""
    named = type("E" * 300, (Exception,), {})
    for error, expected in ((ValueError("bad \ud800 text"), ["ValueError", 12, "bad \ufffd "]),
                            (named("m"), ["E" * 253 + "\u2026", 1, "m"])):
        result = run(MEASURE[lang], language=lang,
                     bindings={"bad": _raising(error), "fine": fine})
        assert (result.status, result.value) == (Status.OK, [expected, "still running"]), \
            result.error


def test_a_value_whose_conversion_fails_answers_the_call(lang: str) -> None:
    async def bad() -> Any:
        return _Bad([1, 2])

    result = run(CATCH[lang], language=lang, bindings={"bad": bad, "fine": fine})
    assert (result.status, result.value) == (Status.OK, ["InvalidValue", "still running"])


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
@pytest.mark.parametrize("raised", [KeyboardInterrupt, SystemExit])
def test_keyboard_interrupt_and_system_exit_reach_the_caller_after_cleanup(
        lang: str, raised: type[BaseException], sync: bool) -> None:
    def sync_bad() -> None:
        raise raised()

    async def async_bad() -> None:
        raise raised()

    bad = sync_bad if sync else async_bad

    async def go() -> RunResult:
        async with Runtime() as rt:
            with pytest.raises(raised):
                await rt.run(pick(lang, python="await bad()", javascript="await bad()"),
                             language=lang, bindings={"bad": bad}, limits=quick())
            # The same Runtime still runs programs (and closes: the leak check).
            return await rt.run("return 1", limits=quick())

    assert asyncio.run(go()).value == 1


def test_stuck_sync_bindings_delay_no_other_run(lang: str) -> None:
    """Sync bindings that never return fill their own threads; tether's
    start-up and teardown work (cold guests, cgroups, work directories)
    runs in threads of its own and is not delayed."""
    release = threading.Event()

    def stuck() -> None:
        release.wait(120)

    async def go() -> list[RunResult]:
        async with Runtime(binding_threads=2, pool=None) as rt:
            stuck_runs = [asyncio.ensure_future(rt.run(
                pick(lang, python="import asyncio\nawait asyncio.gather(stuck(), stuck(), stuck())",
                     javascript="await Promise.all([stuck(), stuck(), stuck()])"),
                language=lang, bindings=[stuck], limits=quick(timeout=2))) for _ in range(2)]
            await asyncio.sleep(0.2)
            try:  # a deadlock fails here rather than hanging the suite
                others = await asyncio.wait_for(asyncio.gather(*(
                    rt.run("return 42", limits=quick(timeout=30)) for _ in range(3))), 60)
                timed_out = await asyncio.wait_for(asyncio.gather(*stuck_runs), 60)
            finally:
                release.set()
            return [*others, *timed_out]

    results = asyncio.run(go())
    assert [r.status for r in results[:3]] == [Status.OK] * 3
    assert [r.value for r in results[:3]] == [42] * 3
    assert [r.status for r in results[3:]] == [Status.TIMEOUT] * 2


def test_sync_bindings_run_at_most_binding_threads_at_once(lang: str) -> None:
    active = peak = 0
    lock = threading.Lock()

    def work() -> None:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        threading.Event().wait(0.05)
        with lock:
            active -= 1

    async def go() -> RunResult:
        async with Runtime(binding_threads=2) as rt:
            return await rt.run(
                pick(lang, python="import asyncio\nawait asyncio.gather(*(work() for _ in range(8)))",
                     javascript="await Promise.all([...Array(8)].map(() => work()))"),
                language=lang, bindings=[work], limits=quick())

    assert asyncio.run(go()).status is Status.OK
    assert peak == 2


def test_binding_threads_must_be_positive() -> None:
    with pytest.raises(ValueError, match="binding_threads"):
        Runtime(binding_threads=0)


def test_the_process_exits_with_a_sync_binding_still_blocked() -> None:
    script = textwrap.dedent("""
        import asyncio, time
        from tether import Limits, Runtime

        def forever():
            time.sleep(3600)

        async def main():
            async with Runtime() as rt:
                result = await rt.run("await forever()", bindings=[forever],
                                      limits=Limits(timeout=1, kill_grace=0.1))
            print(result.status.value)

        asyncio.run(main())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "timeout"), done.stderr


def test_a_runtime_refuses_a_second_event_loop() -> None:
    loop = asyncio.new_event_loop()
    rt = Runtime(pool=PoolConfig(size=0))
    try:
        assert loop.run_until_complete(rt.run("return 1", limits=quick())).value == 1
        with pytest.raises(RuntimeError, match="second event loop"):
            asyncio.run(rt.run("return 2", limits=quick()))
    finally:
        loop.run_until_complete(rt.aclose())
        loop.close()


def test_a_runtime_shared_by_two_threads_each_with_a_loop() -> None:
    async def enter() -> Runtime:
        return await Runtime(pool=PoolConfig(size=0)).__aenter__()

    loop = asyncio.new_event_loop()
    try:
        rt = loop.run_until_complete(enter())
        errors: list[BaseException] = []

        def other_thread() -> None:
            try:
                asyncio.run(rt.run("return 1", limits=quick()))
            except RuntimeError as exc:
                errors.append(exc)

        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join(60)
        assert not thread.is_alive()
        assert len(errors) == 1 and "second event loop" in str(errors[0])
        assert loop.run_until_complete(rt.run("return 3", limits=quick())).value == 3
    finally:
        loop.run_until_complete(rt.aclose())
        loop.close()
