"""Warm guests: started ahead, used once, never shared between runs."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from tether import PoolConfig, Runtime, Status

from .conftest import gone

# The guest's start time (seconds since boot), its identity (PID namespace and
# pid: pids repeat across sandboxes) and its work directory's contents.
WHO = {
    "python": "import os\nticks = int(open('/proc/self/stat').read().rsplit(')', 1)[1].split()[19])\n"
              "me = f\"{os.readlink('/proc/self/ns/pid')}/{os.getpid()}\"\n"
              "return [ticks / os.sysconf('SC_CLK_TCK'), me, os.listdir('.')]",
    "javascript": "const fs = require('fs')\n"
                  "const ticks = Number(fs.readFileSync('/proc/self/stat', 'utf8')"
                  ".split(') ')[1].split(' ')[19])\n"
                  "const me = `${fs.readlinkSync('/proc/self/ns/pid')}/${process.pid}`\n"
                  "fs.writeFileSync('left-behind', 'x')\n"
                  "return [ticks / 100, me, fs.readdirSync('.').filter((f) => f !== 'left-behind')]",
}


def _boot_time() -> float:
    return time.clock_gettime(time.CLOCK_BOOTTIME)


async def _until_ready(rt: Runtime, count: int) -> None:
    for _ in range(500):
        if sum(len(p._ready) for p in rt._pools.values()) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the pool never filled")


def test_runs_take_guests_started_before_them(lang: str) -> None:
    async def go() -> list[Any]:
        async with Runtime(pool=PoolConfig(size=2, prestart=(lang,))) as rt:
            await _until_ready(rt, 2)
            await asyncio.sleep(0.05)
            values = []
            for _ in range(3):
                before = _boot_time()
                result = await rt.run(WHO[lang], language=lang)
                assert result.status is Status.OK, result.error
                values.append((before, *result.value))  # type: ignore[misc]
                await _until_ready(rt, 2)
            return values

    runs = asyncio.run(go())
    for before, started, _pid, listing in runs:
        assert started < before  # the guest existed before run() was called
        assert listing == []  # its own empty work directory
    assert len({me for _, _, me, _ in runs}) == 3  # one guest per run


def test_idle_guests_are_let_go() -> None:
    async def go() -> int:
        async with Runtime(pool=PoolConfig(size=2, idle_timeout=0.2, prestart=("python",))) as rt:
            await _until_ready(rt, 2)
            pids = [g.child.pid for p in rt._pools.values() for g in p._ready]
            await asyncio.sleep(0.6)
            assert all(gone(pid) for pid in pids)
            result = await rt.run("return 7")  # cold again, and the pool refills
            assert result.value == 7
            await _until_ready(rt, 2)
            return len(pids)

    assert asyncio.run(go()) == 2


def test_a_warm_guest_that_died_is_skipped() -> None:
    async def go() -> Any:
        async with Runtime(pool=PoolConfig(size=1, prestart=("python",))) as rt:
            await _until_ready(rt, 1)
            [guest] = [g for p in rt._pools.values() for g in p._ready]
            os.kill(guest.child.pid, 9)
            await asyncio.sleep(0.1)
            return (await rt.run("return 'fresh'")).value

    assert asyncio.run(go()) == "fresh"


def test_without_a_pool_every_guest_starts_cold() -> None:
    async def go() -> Any:
        async with Runtime(pool=None) as rt:
            before = _boot_time()
            result = await rt.run(WHO["python"])
            return before, result.value[0], rt._pools  # type: ignore[index]

    before, started, pools = asyncio.run(go())
    assert started >= before - 0.02  # clock ticks are 10 ms
    assert all(not p._ready for p in pools.values())


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
