"""A run that times out or is cancelled says where the program was
(R-CANCEL-4): the result keeps the host's status and error type, with the
traceback and line of the guest's last DONE. Real guests, every way of
starting one, both sandbox profiles."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Any

import pytest

from tether import PoolConfig, RunResult, Runtime, Status
from tether.codec import encode_payload
from tether.codec.frames import encode_frame
from tether.host.sandbox.profiles import detect

from .conftest import pick, quick, run

PROFILES = ["process"] + (["namespaces"] if detect().namespaces else [])
#: Forked from the template at the run, spawned ahead into a pool, spawned at the run.
STARTS: dict[str, PoolConfig | None] = {
    "forked": PoolConfig(size=0), "spawned": PoolConfig(size=1, fork_server=False),
    "cold": None}

#: A busy loop in spin(), called from line 6; the loop is line 3.
SPIN_IN_A_FUNCTION = {
    "python": "def spin():\n    n = 0\n    while True:\n        n += 1\n\nspin()\n",
    "javascript": "function spin() {\n  let n = 0\n  while (true) {\n    n += 1\n  }\n}"
                  "\nspin()\n",
}


async def _slow() -> None:
    await asyncio.sleep(3600)


def _in(profile: str, start: str, source: str, **options: Any) -> RunResult:
    async def go() -> RunResult:
        async with Runtime(sandbox=profile, pool=STARTS[start]) as rt:
            return await rt.run(source, **options)

    return asyncio.run(go())


def _timed_out_at(result: RunResult, lines: int | set[int], *names: str) -> None:
    """Timed out at one of ``lines`` (a loop stops on any of its lines)."""
    assert result.status is Status.TIMEOUT
    assert result.error is not None and result.error.type == "Timeout"
    assert result.error.line in ({lines} if isinstance(lines, int) else lines), result.error
    for name in names:
        assert name in result.error.traceback, result.error.traceback
    assert "guest" not in result.error.traceback  # the program's frames only (R-DONE-2)


@pytest.mark.filterwarnings("ignore:tether. sandbox='process'")
@pytest.mark.parametrize("start", list(STARTS))
@pytest.mark.parametrize("profile", PROFILES)
def test_a_busy_loop_is_stopped_where_it_spins(profile: str, start: str) -> None:
    """R-CANCEL-4: spin() called from line 6 spins on lines 3-4."""
    result = _in(profile, start, SPIN_IN_A_FUNCTION["python"], limits=quick(timeout=0.5))
    _timed_out_at(result, {3, 4}, "spin()", 'line 6, in <module>', "in spin")


@pytest.mark.filterwarnings("ignore:tether. sandbox='process'")
@pytest.mark.parametrize("start", list(STARTS))
@pytest.mark.parametrize("profile", PROFILES)
def test_a_program_stuck_in_asyncio_sleep(profile: str, start: str) -> None:
    source = "import asyncio\n\nasync def wait():\n    await asyncio.sleep(3600)\n\nawait wait()\n"
    result = _in(profile, start, source, limits=quick(timeout=0.5))
    _timed_out_at(result, 4, "asyncio.sleep(3600)", "in wait")


@pytest.mark.filterwarnings("ignore:tether. sandbox='process'")
@pytest.mark.parametrize("start", list(STARTS))
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("lang", ["python", "javascript"])
def test_a_program_stuck_in_a_binding(profile: str, start: str, lang: str) -> None:
    source = {"python": "def ask():\n    return slow()\n\nawait ask()\n",
              "javascript": "async function ask() {\n  return await slow()\n}\n\nawait ask()\n"}
    result = _in(profile, start, source[lang], language=lang, bindings={"slow": _slow},
                 limits=quick(timeout=0.5))
    _timed_out_at(result, {"python": 4, "javascript": 2}[lang], "ask")


def test_a_busy_loop_in_a_task_is_stopped_where_it_spins() -> None:
    source = ("import asyncio\n\nasync def spin():\n    while True:\n        pass\n\n"
              "await asyncio.gather(spin())\n")
    result = run(source, limits=quick(timeout=0.5))
    _timed_out_at(result, {4, 5}, "in spin")


def test_a_program_blocked_in_a_blocking_call() -> None:
    result = run("import time\n\ntime.sleep(3600)\n", limits=quick(timeout=0.5))
    _timed_out_at(result, 3, "time.sleep(3600)")


def test_a_program_that_prints_in_a_loop() -> None:
    result = run("while True:\n    print('again')\n", limits=quick(timeout=0.5))
    _timed_out_at(result, 2, "print('again')")


def test_what_a_stopped_program_printed_without_a_newline_is_kept(lang: str) -> None:
    """R-CANCEL-4: the OUTPUT a guest flushes as the program stops (text it
    held back, R-OUTPUT-1) is the program's output."""
    source = pick(lang, python="print('working', end='')\nwhile True:\n    pass\n",
                  javascript="process.stdout.write('working')\nwhile (true) {}\n")
    result = run(source, language=lang, limits=quick(timeout=0.5))
    assert result.status is Status.TIMEOUT
    assert result.output == "working"


def test_a_program_that_swallows_the_interruption_is_killed_after_the_grace() -> None:
    """R-CANCEL-4: catching the interruption keeps nothing alive: the guest
    is killed at the grace's end and the result is a plain timeout."""
    source = ("import time\nwhile True:\n    try:\n        while True:\n"
              "            time.sleep(0.01)\n    except BaseException:\n        pass\n")
    result = run(source, limits=quick(timeout=0.5, kill_grace=0.2))
    assert result.status is Status.TIMEOUT
    assert result.error is not None and result.error.type == "Timeout"
    assert result.error.traceback == "" and result.error.line is None
    assert result.stats.exit_code is None  # killed by the host, reaped after run() returned


def _children() -> set[int]:
    pids: set[int] = set()
    for task in os.listdir("/proc/self/task"):
        with contextlib.suppress(OSError), open(f"/proc/self/task/{task}/children") as listed:
            pids.update(int(pid) for pid in listed.read().split())
    return pids


#: The kernel's flag of a task in its exit (include/linux/sched.h).
_PF_EXITING = 0x4


def _killed(pid: int) -> bool:
    """Dead and not reaped, exiting, or with a SIGKILL pending."""
    with open(f"/proc/{pid}/status") as status:
        fields = dict(line.split(":", 1) for line in status)
    with open(f"/proc/{pid}/stat") as stat:
        flags = int(stat.read().rsplit(")", 1)[1].split()[6])
    pending = int(fields["SigPnd"], 16) | int(fields["ShdPnd"], 16)
    return (fields["State"].split()[0] in "ZX" or bool(flags & _PF_EXITING)
            or bool(pending & (1 << (signal.SIGKILL - 1))))


@pytest.mark.parametrize("profile", PROFILES)
def test_a_timed_out_run_returns_once_its_guest_is_killed_not_once_it_died(
        profile: str) -> None:
    """R-TERM-2, R-CANCEL-4: after the grace the host sends SIGKILL and the
    result comes; the processes die and are reaped after run() returned, so
    a loaded machine, where the dying wait for CPU, does not delay it. When
    the Runtime closes, nothing is left."""
    source = "import time\nprint('up', flush=True)\ntime.sleep(60)\n"

    async def go() -> None:
        async with Runtime(sandbox=profile, pool=None) as rt:
            before = _children()
            result = await rt.run(source, limits=quick(timeout=1, kill_grace=0.1))
            left = _children() - before  # read before anything else runs
            assert result.status is Status.TIMEOUT and result.stats.exit_code is None
            assert left and all(_killed(pid) for pid in left)
        assert not _children() & left

    asyncio.run(go())


def test_a_forged_done_after_the_timeout_changes_nothing_but_the_location() -> None:
    """R-CANCEL-4: a DONE with a value, sent after CANCEL, leaves the status
    and error the host decided."""
    done = encode_frame(0x06, encode_payload({"value": 42}))
    source = (f"import os, signal\ndef forge(*_):\n    os.write(3, {done!r})\n    os._exit(0)\n"
              "signal.signal(signal.SIGTERM, forge)\nwhile True:\n    pass\n")
    result = run(source, limits=quick(timeout=0.5))
    assert result.status is Status.TIMEOUT and result.value is None
    assert result.error is not None and result.error.type == "Timeout"
    assert result.error.line is None and result.error.traceback == ""


def test_a_cancelled_run_says_where_it_was() -> None:
    """R-CANCEL-4: closing the runtime cancels the run; the result says so,
    with the location."""
    async def go() -> RunResult:
        rt = await Runtime(pool=None).__aenter__()  # forked guests die with the template
        started = asyncio.Event()

        async def begun() -> None:
            started.set()

        run = asyncio.ensure_future(rt.run(
            "await begun()\n\ndef spin():\n    while True:\n        pass\n\nspin()\n",
            bindings=[begun], limits=quick(timeout=30)))
        await started.wait()
        await asyncio.sleep(0.1)
        await rt.aclose()
        return await run

    result = asyncio.run(go())
    assert result.status is Status.CANCELLED
    assert result.error is not None and result.error.type == "Cancelled"
    assert result.error.line in (4, 5) and "in spin" in result.error.traceback


def test_a_javascript_program_stuck_on_a_timer() -> None:
    source = ("async function wait() {\n  await new Promise(r => setTimeout(r, 3600e3))\n}\n\n"
              "await wait()\n")
    result = run(source, language="javascript", limits=quick(timeout=0.5))
    _timed_out_at(result, 2, "wait")


def test_a_javascript_busy_loop_is_a_plain_timeout() -> None:
    """Node runs the program on the thread that would read CANCEL: a busy
    loop is killed after the grace, with no location (docs/usage.md)."""
    result = run(SPIN_IN_A_FUNCTION["javascript"], language="javascript",
                 limits=quick(timeout=0.5))
    assert result.status is Status.TIMEOUT
    assert result.error is not None and result.error.line is None


@pytest.mark.parametrize("lang", ["python", "javascript"])
def test_a_program_that_sends_itself_sigterm_dies_of_it(lang: str) -> None:
    """R-CANCEL-3: only a SIGTERM after CANCEL interrupts; the program's own
    ends the guest as it would without the handler."""
    source = {"python": "import os, signal, time\nos.kill(os.getpid(), signal.SIGTERM)\n"
                        "time.sleep(5)\n",
              "javascript": "process.kill(process.pid, 'SIGTERM')\n"
                            "await new Promise((r) => setTimeout(r, 5000))\n"}[lang]
    result = run(source, language=lang, limits=quick(timeout=30))
    assert result.status is Status.CRASHED
    assert result.stats.exit_code == -15


def test_a_program_that_calls_a_binding_while_it_winds_down_gets_cancelled() -> None:
    """R-CANCEL-4, R-STATE-3: after CANCEL a call is refused, so the program
    can end and say where it was."""
    source = ("try:\n    await slow()\nexcept BaseException:\n    try:\n        await slow()\n"
              "    except BindingError as e:\n        raise RuntimeError(e.type)\n")
    result = run(source, bindings={"slow": _slow}, limits=quick(timeout=0.5))
    assert result.status is Status.TIMEOUT
    assert result.error is not None and result.error.line == 7
    assert "RuntimeError: Cancelled" in result.error.traceback


def test_a_guest_that_floods_after_cancel_is_killed_after_the_grace() -> None:
    """R-CANCEL-4: nothing the guest sends delays the kill."""
    source = ("import os, signal\ndef flood(*_):\n    while True:\n"
              "        os.write(3, b'\\x54\\x48\\x01\\x05' + b'\\xff' * 65536)\n"
              "signal.signal(signal.SIGTERM, flood)\nwhile True:\n    pass\n")
    result = run(source, limits=quick(timeout=0.5, kill_grace=0.2))
    assert result.status is Status.TIMEOUT
    assert result.error is not None and result.error.traceback == ""
