"""The CPython fork server: forked guests are as separate as started ones
(R-RUN-5), and are still killed and reaped with their run (R-TERM-2)."""

from __future__ import annotations

import asyncio
import logging
import sys
import warnings
from typing import Any

import pytest

from tether import PoolConfig, Runtime, Status
from tether.host import runtime as runtime_module
from tether.host.guests.languages import GuestCommand
from tether.host.guests.launch import StartedGuest
from tether.host.guests.pool import SpawnStarter
from tether.host.guests.zygote import FORKS_IN_FLIGHT
from tether.host.limits import Limits
from tether.host.sandbox.profiles import Sandbox, detect

from .conftest import gone

namespaces = pytest.mark.skipif(not detect().namespaces, reason="needs bwrap namespaces")

#: Run A leaves traces everywhere it can write and listens on an abstract
#: socket; then it waits (in a binding) until run B has looked.
LEAVE_TRACES = """
import os, socket
for path in ('/tmp/trace', '/dev/shm/trace', 'trace'):
    open(path, 'w').write('A was here')
listener = socket.socket(socket.AF_UNIX)
listener.bind('\\0tether-trace')
listener.listen()
await b_has_looked()
return sorted(os.listdir('.'))
"""
LOOK = """
import os, signal, socket
seen = [p for p in ('/tmp/trace', '/dev/shm/trace', 'trace') if os.path.exists(p)]
try:
    socket.socket(socket.AF_UNIX).connect('\\0tether-trace')
    seen.append('abstract socket')
except OSError:
    pass
try:
    os.kill(-1, signal.SIGKILL)  # every process it may signal: none of run A's
except ProcessLookupError:
    pass  # none at all: init and itself are spared
return [seen, os.getpid(), sorted(os.listdir('/proc'))]
"""


@namespaces
def test_concurrent_forked_runs_cannot_see_or_reach_each_other() -> None:
    async def go() -> tuple[Any, Any]:
        looked = asyncio.Event()

        async def b_has_looked() -> None:
            await looked.wait()

        async with Runtime(sandbox="namespaces", pool=PoolConfig(size=2, prestart=("python",))) as rt:
            a = asyncio.create_task(rt.run(LEAVE_TRACES, bindings=[b_has_looked]))
            while not a.done() and not rt._sessions:  # A is running
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.2)
            b = await rt.run(LOOK)
            looked.set()
            if not rt._zygotes[rt.sandbox].alive:
                pytest.skip("guests cannot be forked here: they start as new interpreters")
            return await a, b

    a, b = asyncio.run(go())
    assert a.status is Status.OK, a.error
    assert a.value == ["trace"]
    assert b.status is Status.OK, b.error
    seen, pid, proc = b.value
    assert seen == []
    assert pid == 2  # its own PID namespace, under an init of its own
    assert proc == []  # no view of the template's processes


def test_forked_guests_do_not_share_random_state() -> None:
    async def go() -> list[Any]:
        async with Runtime(pool=PoolConfig(size=2, prestart=("python",))) as rt:
            runs = [await rt.run("import random\nreturn random.random()") for _ in range(3)]
            return [r.value for r in runs]

    values = asyncio.run(go())
    assert len(set(values)) == 3


def test_a_forked_program_sees_nothing_of_the_rehearsal() -> None:
    program = ("import linecache, sys\n"
               "print('out')\n"
               "return [sorted(k for k in globals() if not k.startswith('__')),\n"
               "        linecache.getlines('<program>')[1], type(sys.stdout).__name__]")

    async def go() -> Any:
        async with Runtime(pool=PoolConfig(size=1, prestart=("python",))) as rt:
            return await rt.run(program)

    result = asyncio.run(go())
    assert result.ok, result.error
    assert result.value == [["linecache", "sys"], "print('out')\n",
                            "ProgramStream"]
    assert result.stdout == "out\n"


def test_a_program_signalling_itself_dies_as_anywhere_else() -> None:
    """The program is not its namespace's init (which ignores such signals)."""
    async def go() -> Any:
        async with Runtime(pool=PoolConfig(size=1, prestart=("python",))) as rt:
            return await rt.run("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n"
                                "return 'survived'")

    result = asyncio.run(go())
    assert result.status is Status.CRASHED
    assert "SIGTERM" in result.error.message  # type: ignore[union-attr]


def test_a_template_that_died_is_replaced() -> None:
    async def go() -> list[Any]:
        async with Runtime(pool=PoolConfig(size=1, prestart=("python",))) as rt:
            first = await rt.run("return 1")
            (template,) = rt._zygotes.values()
            assert template._launched is not None
            old = template._launched.child.pid
            template._launched.kill()
            assert gone(old)
            await asyncio.sleep(0.1)
            second = await rt.run("return 2")
            third = await rt.run("return 3")
            assert template.alive and template._launched.child.pid != old
            return [r.value for r in (first, second, third)]

    assert asyncio.run(go()) == [1, 2, 3]


def test_where_forking_fails_guests_start_as_new_interpreters(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    def broken(workdir: str, mode: str, *_: Any) -> GuestCommand:
        return GuestCommand((sys.executable, "-c", "raise SystemExit('no fork server')"), {})

    monkeypatch.setattr(runtime_module, "zygote_command", broken)

    async def go() -> list[Any]:
        async with Runtime(pool=PoolConfig(size=1)) as rt:
            return [(await rt.run(f"return {i}")).value for i in range(5)]

    with caplog.at_level(logging.WARNING, logger="tether"):
        assert asyncio.run(go()) == [0, 1, 2, 3, 4]
    assert any("cannot be forked" in r.message for r in caplog.records)


@pytest.mark.parametrize("profile", [Sandbox.PROCESS, Sandbox.NAMESPACES])
def test_each_forked_run_has_its_own_empty_work_directory(profile: Sandbox) -> None:
    if profile is Sandbox.NAMESPACES and not detect().namespaces:
        pytest.skip("needs bwrap namespaces")

    async def go() -> list[Any]:
        async with Runtime(sandbox=profile, pool=PoolConfig(size=2, prestart=("python",))) as rt:
            program = ("import os\nfound = os.listdir('.')\nopen('mine', 'w').write('x')\n"
                       "return [found, os.getcwd() == os.environ['HOME'] == os.environ['PWD']]")
            return [(await rt.run(program)).value for _ in range(3)]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "process as root" is expected here
        values = asyncio.run(go())
    assert values == [[[], True]] * 3


@pytest.mark.parametrize("profile", [Sandbox.PROCESS, Sandbox.NAMESPACES])
def test_closing_while_guests_are_being_forked_never_hangs(profile: Sandbox) -> None:
    """A guest killed the moment it is forked (before it could set up its
    own process group) is still killed: the template gives it its group."""
    if profile is Sandbox.NAMESPACES and not detect().namespaces:
        pytest.skip("needs bwrap namespaces")

    program = "import os\nopen('f', 'w').write('x')\nreturn len(os.listdir('.'))"

    async def go() -> list[Any]:
        values = []
        for _ in range(10):
            rt = Runtime(sandbox=profile, pool=PoolConfig(size=2, prestart=("python",)))
            await rt.__aenter__()
            values += [(await rt.run(program)).value for _ in range(3)]
            await asyncio.wait_for(rt.aclose(), 10)  # the refills are still forking
        return values

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "process as root" is expected here
        assert asyncio.run(go()) == [1] * 30


def test_a_run_still_forking_its_guest_when_the_runtime_closes_does_not_start() -> None:
    async def go() -> Any:
        rt = Runtime(pool=PoolConfig(size=0))  # every guest forked at its run
        await rt.__aenter__()
        await rt.run("return 1")  # the template is up
        late = asyncio.create_task(rt.run("return 2"))
        await asyncio.sleep(0)  # it is waiting for its fork
        await rt.aclose()
        return await late

    result = asyncio.run(go())
    assert result.status is Status.CANCELLED
    assert result.error.message == "the runtime was closed before the program started"


def test_a_burst_at_the_start_waits_for_forks_not_new_interpreters(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """More runs at once than the template's control socket queues requests
    (net.unix.max_dgram_qlen), right after the Runtime's creation, before
    its template is up: each waits for its fork; none is taken for a
    sign that forking fails here and started as a new interpreter."""
    cold = 0
    start_cold = SpawnStarter.start_cold

    async def counted(self: SpawnStarter, limits: Limits) -> StartedGuest:
        nonlocal cold
        cold += 1
        return await start_cold(self, limits)

    monkeypatch.setattr(SpawnStarter, "start_cold", counted)

    async def go() -> list[Any]:
        async with Runtime() as rt:
            results = await asyncio.gather(*(rt.run(f"return {i}") for i in range(300)))
            return [r.value if r.status is Status.OK else r.error for r in results]

    with caplog.at_level(logging.WARNING, logger="tether"):
        assert asyncio.run(go()) == list(range(300))
    assert cold == 0  # runs that found no guest and were not given a forked one
    assert [r.message for r in caplog.records if r.name == "tether"] == []


def test_runs_waiting_their_turn_to_fork_when_the_runtime_closes_start_nothing() -> None:
    """More runs forking at once than the template is sent requests for: those
    still waiting their turn when the Runtime closes end cancelled, and none
    starts the template again behind the close."""
    async def go() -> tuple[list[Any], bool]:
        rt = Runtime(pool=PoolConfig(size=0))  # every guest forked at its run
        await rt.__aenter__()
        await rt.run("return 1")  # the template is up
        runs = [asyncio.create_task(rt.run("return 2")) for _ in range(40)]
        await asyncio.sleep(0)  # each is waiting for its fork, or its turn
        await rt.aclose()
        results = await asyncio.gather(*runs)
        await asyncio.sleep(0.5)  # what the last of them could have started meanwhile
        return [r.status for r in results], any(z.alive for z in rt._zygotes.values())

    statuses, template_alive = asyncio.run(go())
    assert set(statuses) == {Status.CANCELLED}
    assert not template_alive


def test_a_run_whose_fork_waits_past_its_timeout_ends_at_it_without_running() -> None:
    """A guest forked for a run counts in the run's time: when the forks
    queued ahead of it (as under load) use up the run's timeout, the run
    ends ``timeout`` then, and its program never runs."""
    async def go() -> None:
        async with Runtime(pool=PoolConfig(size=0)) as rt:
            assert (await rt.run("return 1")).value == 1  # the template is up
            zygote = next(iter(rt._zygotes.values()))
            for _ in range(FORKS_IN_FLIGHT):  # every fork's turn taken
                await zygote._in_flight.acquire()
            try:
                result = await asyncio.wait_for(
                    rt.run("print('ran')", limits=Limits(timeout=0.5)), 30)
            finally:
                for _ in range(FORKS_IN_FLIGHT):
                    zygote._in_flight.release()
            assert result.status is Status.TIMEOUT and result.output == ""
            assert result.error is not None and "did not run" in result.error.message
            assert (await rt.run("return 2")).value == 2  # the pool serves on

    asyncio.run(go())
