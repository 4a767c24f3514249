"""Warm guests: started ahead, used once, never shared between runs (R-RUN-5)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import time
from pathlib import Path
from typing import Any

import pytest

from tether import Limits, PoolConfig, Runtime, Status
from tether.host.guests.launch import StartedGuest
from tether.host.guests.pool import ForkStarter

from .conftest import alive, until_ready

# What a run's work directory holds (its own, empty); the JavaScript program
# leaves a file behind, which no later run may see.
LISTING = {
    "python": "import os\nopen('left-behind', 'w').write('x')\n"
              "return [f for f in os.listdir('.') if f != 'left-behind']",
    "javascript": "const fs = require('fs')\n"
                  "fs.writeFileSync('left-behind', 'x')\n"
                  "return fs.readdirSync('.').filter((f) => f !== 'left-behind')",
}


def test_runs_take_guests_started_before_them(lang: str) -> None:
    async def go() -> list[tuple[Any, Any]]:
        async with Runtime(pool=PoolConfig(size=2, prestart=(lang,))) as rt:
            await until_ready(rt, 2)
            runs = []
            for _ in range(3):
                (pool,) = rt._pools.values()
                first = pool._ready[0]  # ready (it said HELLO) before run() is called
                result = await rt.run(LISTING[lang], language=lang)
                assert result.status is Status.OK, result.error
                runs.append((result.value, first))
                await until_ready(rt, 2)
                assert first not in pool._ready
        return runs

    runs = asyncio.run(go())
    assert all(listing == [] for listing, _ in runs)  # its own empty work directory
    assert len({id(guest) for _, guest in runs}) == 3  # one guest per run
    assert all(guest.child.exited.done() for _, guest in runs)


def test_a_warm_guest_takes_the_limits_of_its_run(lang: str) -> None:
    """A warm guest waits without the limits of any run; each run applies
    its own before its RUN."""
    source = {"python": "import resource\nreturn resource.getrlimit(resource.RLIMIT_NOFILE)[0]",
              "javascript": "return Number(require('node:fs').readFileSync("
                            "'/proc/self/limits', 'utf8').match(/Max open files +(\\d+)/)[1])"}[lang]

    async def go() -> list[Any]:
        async with Runtime(limits=Limits(open_files=200),
                           pool=PoolConfig(size=2, prestart=(lang,))) as rt:
            await asyncio.sleep(0.5)
            first = await rt.run(source, language=lang)
            await asyncio.sleep(0.5)
            second = await rt.run(source, language=lang, limits=Limits(open_files=100))
            return [first.value, second.value]

    assert asyncio.run(go()) == [200, 100]


#: The program's own rlimits, as /proc/self/limits shows them (a forked
#: Python guest has no /proc: it writes the rows itself).
OWN_LIMITS = {
    "python": "import resource\n"
              "rows = {'Max cpu time': 'CPU', 'Max file size': 'FSIZE', 'Max open files': 'NOFILE',\n"
              "        'Max address space': 'AS'}\n"
              "return '\\n'.join(f'{row} ' + ' '.join(map(str, resource.getrlimit(\n"
              "    getattr(resource, 'RLIMIT_' + name)))) for row, name in rows.items())",
    "javascript": "return require('node:fs').readFileSync('/proc/self/limits', 'utf8')"}
#: Their rows in /proc/self/limits.
LIMIT_ROWS = {"Max cpu time": "cpu", "Max file size": "file", "Max open files": "files",
              "Max address space": "memory"}


def _own_limits(text: str) -> dict[str, tuple[str, str]]:
    """The (soft, hard) limits of a program's /proc/self/limits."""
    found = {}
    for line in text.splitlines():
        for row, name in LIMIT_ROWS.items():
            if line.startswith(row):
                soft, hard = line[len(row):].split()[:2]
                found[name] = (soft, hard)
    return found


def test_a_run_gets_higher_limits_than_the_run_that_started_its_pool(lang: str) -> None:
    """A guest waits in the pool with no run's limits, none lowered ahead:
    a run gets exactly its own, however low those of the runs before it
    were, and its hard limits are its own too (the program cannot raise its
    soft limits past them)."""
    low = Limits(open_files=64, file_bytes=1000, timeout=2, memory_bytes=256 << 20)

    async def go() -> list[dict[str, tuple[str, str]]]:
        async with Runtime(limits=low, pool=PoolConfig(size=2, prestart=(lang,))) as rt:
            await until_ready(rt, 2)
            first = await rt.run(OWN_LIMITS[lang], language=lang)
            await until_ready(rt, 2)
            second = await rt.run(OWN_LIMITS[lang], language=lang, limits=Limits(
                open_files=200, file_bytes=5000, timeout=20, memory_bytes=256 << 20))
            assert first.status is Status.OK and second.status is Status.OK
            return [_own_limits(first.value), _own_limits(second.value)]

    first, second = asyncio.run(go())
    assert first["files"] == ("64", "64") and second["files"] == ("200", "200")
    assert first["file"] == ("1000", "1000") and second["file"] == ("5000", "5000")
    assert first["cpu"] == ("3", "4") and second["cpu"] == ("21", "22")  # SIGXCPU, then SIGKILL


def test_a_forked_guest_gets_more_memory_than_the_run_that_started_its_pool() -> None:
    """The first run for a language creates its pool; a later run asking for
    more memory gets it, from a warm guest or one forked for it."""
    source = "import resource\nreturn resource.getrlimit(resource.RLIMIT_AS)"

    async def go(config: PoolConfig) -> list[Any]:
        async with Runtime(limits=Limits(memory_bytes=256 << 20), pool=config) as rt:
            first = await rt.run(source)
            await asyncio.sleep(0.3)
            second = await rt.run(source, limits=Limits(memory_bytes=1024 << 20))
            await asyncio.sleep(0.3)
            third = await rt.run(source)
            return [first.value, second.value, third.value]

    for config in (PoolConfig(), PoolConfig(size=0)):  # warm, and forked on demand
        assert asyncio.run(go(config)) == [[256 << 20] * 2, [1024 << 20] * 2, [256 << 20] * 2]


def test_a_run_without_a_limit_has_the_hosts_not_an_earlier_runs() -> None:
    """``None`` leaves a resource as the host has it: not as a run before
    it on the same pool set it."""
    async def go() -> Any:
        async with Runtime(limits=Limits(open_files=20),
                           pool=PoolConfig(size=2, prestart=("python",))) as rt:
            await until_ready(rt, 2)
            await rt.run("return 1")
            await until_ready(rt, 2)
            result = await rt.run("import resource\n"
                                  "return resource.getrlimit(resource.RLIMIT_NOFILE)",
                                  limits=Limits(open_files=None))
            return result.value

    assert asyncio.run(go()) == list(resource.getrlimit(resource.RLIMIT_NOFILE))


def test_idle_guests_are_let_go() -> None:
    async def go() -> int:
        async with Runtime(pool=PoolConfig(size=2, idle_timeout=1.0, prestart=("python",))) as rt:
            await until_ready(rt, 2)
            pids = [g.child.pid for p in rt._pools.values() for g in p._ready]
            # The pool lets them go on the loop: wait on it, not beside it.
            deadline = asyncio.get_running_loop().time() + 10
            while any(alive(pid) for pid in pids) and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.01)
            assert not any(alive(pid) for pid in pids)
            result = await rt.run("return 7")  # cold again, and the pool refills
            assert result.value == 7
            await until_ready(rt, 2)
            return len(pids)

    assert asyncio.run(go()) == 2


def test_an_idle_pool_stops_its_template_once_its_guests_are_gone() -> None:
    """The CPython template is let go with the pool's guests, after the last
    of them has exited (under namespaces they live in its PID namespace)."""
    async def go() -> tuple[bool, bool]:
        async with Runtime(pool=PoolConfig(size=2, idle_timeout=0.5, prestart=("python",))) as rt:
            await until_ready(rt, 2)
            [zygote] = rt._zygotes.values()
            started = zygote._launched is not None
            deadline = asyncio.get_running_loop().time() + 10
            while zygote._launched is not None and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.01)
            return started, zygote._launched is None

    assert asyncio.run(go()) == (True, True)


def test_a_runtime_closed_as_its_idle_guests_are_let_go_still_ends_them(lang: str) -> None:
    """Closing the Runtime while the pool is letting its idle guests go
    waits for that, and cuts none of it short: every guest is gone and
    reaped, and its descriptors closed."""
    async def go() -> list[Any]:
        rt = Runtime(pool=PoolConfig(size=2, idle_timeout=0.5, prestart=(lang,)))
        await rt.__aenter__()
        try:
            await until_ready(rt, 2)
            [pool] = rt._pools.values()
            guests = list(pool._ready)
            deadline = asyncio.get_running_loop().time() + 10
            while pool._ready and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0)  # the idle timer hands them over to be ended
        finally:
            await rt.aclose()  # the very next step: they are being ended now
        return guests

    guests = asyncio.run(go())
    assert len(guests) == 2
    for guest in guests:
        assert not alive(guest.child.pid)
        assert guest.child.returncode is not None  # reaped, not a zombie
        assert guest.child.channel.fileno() == -1


def _held(rt: Runtime) -> int:
    return sum(len(p._ready) + p._starting for p in rt._pools.values())


def test_the_pool_grows_with_a_burst_and_shrinks_when_idle() -> None:
    """Runs that find the pool empty make it keep more guests ready, up to
    max_size; once idle it is back to size."""
    async def go() -> tuple[int, int]:
        config = PoolConfig(size=1, max_size=3, idle_timeout=1.0, prestart=("python",))
        async with Runtime(pool=config) as rt:
            await until_ready(rt, 1)
            results = await asyncio.gather(*(rt.run("return 1") for _ in range(6)))
            assert all(r.status is Status.OK for r in results)
            await until_ready(rt, 3)
            grown = _held(rt)
            [pool] = rt._pools.values()
            deadline = asyncio.get_running_loop().time() + 10
            while pool._ready and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.01)  # let go after idle_timeout
            assert (await rt.run("return 2")).value == 2
            await until_ready(rt, 1)
            return grown, _held(rt)

    assert asyncio.run(go()) == (3, 1)


def test_a_growing_pool_starts_its_guests_a_few_at_a_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """After a burst the pool refills up to max_size, starting no more than
    its starter's ``starts_at_once`` together: guests started together share
    the CPUs, and the first would be ready only about when the last is."""
    monkeypatch.setattr(ForkStarter, "starts_at_once", 2)

    async def go() -> tuple[int, int]:
        config = PoolConfig(size=1, max_size=6, prestart=("python",))
        async with Runtime(pool=config) as rt:
            await until_ready(rt, 1)
            [pool] = rt._pools.values()
            starter = pool._starter
            start = starter.start
            at_once = most = 0

            async def counted(*, ahead: bool = True, paced: bool = False) -> StartedGuest:
                nonlocal at_once, most
                if not ahead:  # a run waits for it: not one of the pool's own
                    return await start(ahead=ahead, paced=paced)
                at_once += 1
                most = max(most, at_once)
                try:
                    return await start(ahead=ahead, paced=paced)
                finally:
                    at_once -= 1

            monkeypatch.setattr(starter, "start", counted)
            results = await asyncio.gather(*(rt.run("return 1") for _ in range(8)))
            assert all(r.status is Status.OK for r in results)
            await until_ready(rt, 6)
            return most, _held(rt)

    assert asyncio.run(go()) == (2, 6)


def test_runs_far_apart_get_guests_with_their_heap_ready() -> None:
    """Once runs come PACED_SECONDS apart or more, the guests that wait for
    them make their heap ready before their HELLO (guest/python/heap.py): a
    1 MB string from a binding lands in pages already written."""
    text = "x" * 1_000_000

    async def big_str() -> str:
        return text

    program = ("import resource\n"
               "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
               "s = await big_str()\n"
               "return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before")

    async def go() -> list[int]:
        async with Runtime(pool=PoolConfig(size=1, prestart=("python",))) as rt:
            faults = []
            for _ in range(4):
                await until_ready(rt, 1)
                await asyncio.sleep(0.2)
                result = await rt.run(program, bindings={"big_str": big_str})
                assert result.status is Status.OK, result.error
                faults.append(result.value)
            return faults

    faults = asyncio.run(go())
    assert faults[-1] < (2 << 20) // 4096 // 4, faults  # a quarter of two fresh megabytes


def test_a_warm_guest_that_died_is_skipped() -> None:
    async def go() -> Any:
        async with Runtime(pool=PoolConfig(size=1, prestart=("python",))) as rt:
            await until_ready(rt, 1)
            [guest] = [g for p in rt._pools.values() for g in p._ready]
            os.kill(guest.child.pid, 9)
            await asyncio.sleep(0.1)
            return (await rt.run("return 'fresh'")).value

    assert asyncio.run(go()) == "fresh"


def test_a_closed_runtime_cannot_be_entered_again() -> None:
    async def go() -> None:
        rt = Runtime(pool=PoolConfig(size=1, prestart=("python",)))
        async with rt:
            pass
        before = _children()
        with pytest.raises(RuntimeError, match="closed"):
            await rt.__aenter__()
        await asyncio.sleep(0.2)
        assert _children() - before == set()  # nothing started for it

    asyncio.run(go())


def test_without_a_pool_every_guest_starts_cold() -> None:
    started = ("import os\n"
               "ticks = int(open('/proc/self/stat').read().rsplit(')', 1)[1].split()[19])\n"
               "return ticks / os.sysconf('SC_CLK_TCK')")  # seconds since boot

    async def go() -> Any:
        async with Runtime(pool=None) as rt:
            before = time.clock_gettime(time.CLOCK_BOOTTIME)
            result = await rt.run(started)
            return before, result.value, rt._pools, rt._zygotes

    before, started_at, pools, templates = asyncio.run(go())
    assert started_at >= before - 0.02  # clock ticks are 10 ms
    assert all(not p._ready for p in pools.values())
    assert not templates  # and nothing is forked


def _children() -> set[int]:
    """This process's children that have not exited."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and alive(int(entry)):
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == os.getpid():
                found.add(int(entry))
    return found


def test_runs_cancelled_while_their_guests_start_cold_leave_no_process(lang: str) -> None:
    """Cancelled before, during and after its guest's start: the guest, as it
    comes or later, is ended, and the close waits for it."""
    async def go() -> set[int]:
        before = _children()
        async with Runtime(pool=None) as rt:
            for delay in (0.0, 0.002, 0.01, 0.03, 0.06, 0.1, 0.2):
                run = asyncio.ensure_future(rt.run("return 1", language=lang))
                await asyncio.sleep(delay)
                run.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await run
        return _children() - before

    assert asyncio.run(go()) == set()


def test_a_cold_python_guest_loads_asyncio_only_for_programs_that_import_it() -> None:
    """Warm guests load it ahead; programs without it run without the loop."""
    async def add(a: int, b: int) -> int:
        return a + b

    async def go() -> list[Any]:
        async with Runtime(pool=None) as rt:
            plain = await rt.run("import sys\nx = await add(1, 2)\nreturn ['asyncio' in sys.modules, x]",
                                 bindings=[add])
            uses = await rt.run("import asyncio, sys\nreturn ['asyncio' in sys.modules, "
                                "sum(await asyncio.gather(add(1, 2), add(3, 4)))]",
                                bindings=[add])
            return [plain.value, uses.value]

    assert asyncio.run(go()) == [[False, 3], [True, 10]]


def test_a_warm_typescript_guest_runs_and_reports_as_a_cold_one() -> None:
    """A TypeScript pool's guests compile a program of their own while they
    wait (loading the type stripper): nothing of it shows in a run, its
    errors' lines included."""
    programs = ["const n: number = 41;\nreturn n + 1;",
                "const a: number = 1;\nconst b: string = 'x';\nlet = ;\n"]

    async def go() -> list[Any]:
        async with Runtime(pool=PoolConfig(size=2, prestart=("typescript",))) as rt:
            await until_ready(rt, 2)
            results = [await rt.run(source, language="typescript") for source in programs]
        async with Runtime(pool=None) as rt:
            results += [await rt.run(source, language="typescript") for source in programs]
        return [(r.status, r.value, r.error and (r.error.type, r.error.line)) for r in results]

    results = asyncio.run(go())
    warm, cold = results[:2], results[2:]
    assert warm == cold
    assert warm[0] == (Status.OK, 42, None)
    assert warm[1][2] == ("SyntaxError", 3)


def test_a_taken_guest_is_replaced_while_its_run_goes_on(lang: str) -> None:
    """The next run need not wait for a guest started after this one ends:
    the pool is full again while the run still waits in a binding."""
    async def go() -> Any:
        finish = asyncio.Event()

        async def wait() -> None:
            await finish.wait()

        async with Runtime(pool=PoolConfig(size=2, prestart=(lang,))) as rt:
            await until_ready(rt, 2)
            run = asyncio.create_task(rt.run("await wait()\nreturn 1" if lang == "python"
                                             else "await wait();\nreturn 1;",
                                             language=lang, bindings=[wait]))
            while not rt._sessions:  # the run has its guest
                await asyncio.sleep(0.01)
            try:
                await until_ready(rt, 2)
            finally:
                finish.set()
            return (await run).value

    assert asyncio.run(go()) == 1
