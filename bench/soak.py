"""tether soak: many runs at once, hostile and well-behaved mixed, on one Runtime.

    .venv/bin/python bench/soak.py [--runs N] [--callers C] [--sandbox namespaces|process]

C callers take programs from a fixed mix until N runs have returned. Hostile
programs flood fd 3 with frames at the item bound, send calls they never
read the results of, fork-bomb, leave a setsid()-ed escapee, allocate
without bound, write until the disk bound, spin, and raise from a binding
whatever it can raise. Well-behaved ones are a hello, a binding call, and a
sleep that must end by its 1 s timeout: how late that one returns (its
"overshoot") says whether hostile runs delay others.

Prints runs/s, the statuses per program, lost results (a run that raised or
never returned), what was left behind after the Runtime closed (processes,
descriptors, work directories, cgroups), the host's RSS before and after,
and the worst timeout overshoot of a well-behaved run. Exits 1 if anything
was lost or leaked, or the overshoot reached 0.5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import ctypes
import gc
import os
import resource
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from tether import Limits, Runtime, Status
from tether.codec import value_items
from tether.host import cgroups

MARKER = f"tether-soak-{os.getpid()}"
ITEMS = value_items(Limits().value_bytes)


def echo(value: Any) -> Any:
    return value


def raises_base() -> None:
    raise BaseException("not an Exception")


def _flood(count: int, times: int) -> str:
    """A program that writes, straight to fd 3, ``times`` (at most 23) CALLs
    of ``echo`` whose args are ``count`` empty arrays, and never reads."""
    return f"""
import os, time
for call_id in range(1, {times} + 1):
    payload = (b"\\xa4\\x62id" + bytes([call_id]) + b"\\x64args\\x9a"
               + ({count}).to_bytes(4, "big") + b"\\x80" * {count}
               + b"\\x64name\\x64echo\\x66kwargs\\xa0")
    view = memoryview(b"TH\\x01\\x03\\x00\\x00" + len(payload).to_bytes(4, "big") + payload)
    while view:
        view = view[os.write(3, view):]
time.sleep(30)
"""


PROGRAMS: dict[str, tuple[str, Limits]] = {
    # well-behaved
    "hello": ("print('hello')\nreturn 42", Limits(timeout=10)),
    "call": ("return await echo([1, 'two', {'three': 3.0}])", Limits(timeout=10)),
    "sleeps past its timeout": ("import time\ntime.sleep(30)", Limits(timeout=1, kill_grace=0.1)),
    # hostile
    "frames at the item bound": (_flood(ITEMS - 100, 10), Limits(timeout=4, kill_grace=0.1)),
    "16 million empty arrays": (_flood(16_000_000, 1), Limits(timeout=10, kill_grace=0.1)),
    "fork bomb": (f"""
import os, sys
try:
    while True:
        if os.fork() == 0:
            os.execv(sys.executable,
                     [sys.executable, "-c", "import time; time.sleep(60)", "{MARKER}"])
except OSError:
    pass
return "stopped"
""", Limits(timeout=10, processes=64, kill_grace=0.1)),
    "setsid escapee": (f"""
import os, signal, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(120)", "{MARKER}"])
    os._exit(0)
time.sleep(0.2)
return "left"
""", Limits(timeout=10)),
    "allocates without bound": ("x = []\nwhile True:\n    x.append(bytearray(1 << 20))",
                                Limits(timeout=10, memory_bytes=256 << 20)),
    "fills the disk": ("""
chunk = b"x" * (1 << 20)
try:
    with open("fill", "wb") as f:
        while True:
            f.write(chunk)
except OSError as e:
    return e.errno
""", Limits(timeout=10, disk_bytes=32 << 20, file_bytes=None)),
    "spins": ("while True:\n    pass", Limits(timeout=1, kill_grace=0.1)),
    "binding raises BaseException": ("try:\n    await raises_base()\nexcept BindingError as e:\n"
                                     "    return e.type", Limits(timeout=10)),
}

WELL_BEHAVED = ("hello", "call", "sleeps past its timeout")


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _marked_processes() -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if MARKER.encode() in cmdline and state != "Z":
                count += 1
    return count


def _cgroups() -> set[str]:
    support = cgroups.available()
    if support.version is None:
        return set()
    root = cgroups.ROOT / cgroups.PARENT if support.version == 2 else \
        cgroups.ROOT / "pids" / cgroups.PARENT
    try:
        return {p.name for p in root.iterdir() if p.is_dir()}
    except OSError:
        return set()


async def soak(runs: int, callers: int, sandbox: str) -> int:
    names = list(PROGRAMS)
    statuses: dict[str, collections.Counter[str]] = {n: collections.Counter() for n in names}
    lost: list[str] = []
    overshoot = 0.0
    started = 0
    fds_before = set(os.listdir("/proc/self/fd"))
    dirs_before = set(Path(tempfile.gettempdir()).glob("tether-run-*"))
    groups_before = _cgroups()
    rss_before = _rss_mb()
    t0 = time.perf_counter()
    async with Runtime(sandbox=sandbox) as rt:
        async def caller() -> None:
            nonlocal started, overshoot
            while started < runs:
                name = names[started % len(names)]
                started += 1
                source, limits = PROGRAMS[name]
                begun = time.perf_counter()
                try:
                    result = await asyncio.wait_for(
                        rt.run(source, bindings=[echo, raises_base], limits=limits),
                        limits.timeout + 30)
                except BaseException as exc:  # a lost result
                    lost.append(f"{name}: {exc!r}")
                    continue
                took = time.perf_counter() - begun
                statuses[name][result.status.value] += 1
                if name == "sleeps past its timeout":
                    overshoot = max(overshoot, took - limits.timeout)
                    if result.status is not Status.TIMEOUT:
                        lost.append(f"{name}: {result.status.value}")
                elif name in WELL_BEHAVED and result.status is not Status.OK:
                    lost.append(f"{name}: {result.status.value} {result.error}")

        await asyncio.gather(*(caller() for _ in range(callers)))
    elapsed = time.perf_counter() - t0
    await asyncio.sleep(0.5)  # escapees' and zombies' last moments
    # Test suites running beside the soak make cgroups of their own under
    # the same parent: a leak is one that stays.
    new_groups = _cgroups() - groups_before
    await asyncio.sleep(5)
    leaked_groups = new_groups & _cgroups()
    gc.collect()
    ctypes.CDLL(None).malloc_trim(0)  # what the allocator keeps is not a leak
    leaks = {
        "processes": _marked_processes(),
        "descriptors": len(set(os.listdir("/proc/self/fd")) - fds_before),
        "work directories": len(set(Path(tempfile.gettempdir()).glob("tether-run-*"))
                                - dirs_before),
        "cgroups": len(leaked_groups),
    }
    print(f"{runs} runs, {callers} callers, sandbox={sandbox}: {elapsed:.1f} s, "
          f"{runs / elapsed:.1f} runs/s")
    for name in names:
        print(f"  {name:32} {dict(statuses[name])}")
    print(f"lost: {len(lost)}" + "".join(f"\n  {line}" for line in lost[:20]))
    print("left behind: " + ", ".join(f"{k} {v}" for k, v in leaks.items()))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"host RSS: {rss_before:.1f} MB before, {_rss_mb():.1f} MB after (peak {peak:.0f} MB)")
    print(f"worst timeout overshoot of a well-behaved run: {overshoot * 1000:.0f} ms")
    failed = bool(lost) or any(leaks.values()) or overshoot >= 0.5
    return 1 if failed else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--callers", type=int, default=20)
    parser.add_argument("--sandbox", default="namespaces")
    args = parser.parse_args()
    warnings.simplefilter("ignore", RuntimeWarning)  # "process as root"
    sys.exit(asyncio.run(soak(args.runs, args.callers, args.sandbox)))


if __name__ == "__main__":
    main()
