"""tether soak: many runs at once, hostile and well-behaved mixed, on one Runtime.

    .venv/bin/python bench/soak.py [--runs N] [--callers C]
        [--sandbox namespaces|process] [--start fork|spawn|cold] [--without NAME]...

C callers take programs from a fixed mix until N runs have returned. Hostile
programs keep both CPUs busy and try every other way to hurt the host: they
spin, fork-bomb with spinning or sleeping children, flood fd 3 with frames
at the item bound, send calls they never read the results of, print and
write to fd 1 without end, leave a setsid()-ed escapee, allocate without
bound, write until the disk bound, and raise from a binding whatever it
can raise. Well-behaved ones are a hello, a binding call, and a sleeper
that must end by its 2 s timeout: how late that one returns (its
"overshoot") says whether hostile runs delay others. ``--start``: guests
forked from the template (the default), spawned into the pool
(``fork_server=False``), or each started cold (``pool=None``). ``--without``
leaves a program out of the mix (to find which one delays the others).

Prints runs/s, the statuses per program, lost results (a run that raised or
never returned), what was left behind after the Runtime closed (processes,
descriptors, work directories, cgroups), the host's RSS before and after,
the event loop's worst lag, and the sleepers' overshoot: the worst, the
median and the 99th percentile, and for the worst where its time went
(waiting for its program to start, and from its deadline to its result).
Exits 1 if anything was lost or leaked, or the worst overshoot reached 0.5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import ctypes
import gc
import os
import resource
import statistics
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether import Limits, PoolConfig, Printed, RunEvent, Runtime, Status
from tether.codec import value_items
from tether.host.sandbox import cgroups, owners

MARKER = f"tether-soak-{os.getpid()}"
ITEMS = value_items(Limits().value_bytes)
#: The sleeper's timeout.
SLEEPER_TIMEOUT = 2.0


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


def _fork_bomb(child: str, after: str) -> str:
    """Fork until the run's process limit (each child execs ``child``, in
    Python), then ``after``."""
    return f"""
import os, sys
try:
    while True:
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", {child!r}, "{MARKER}"])
except OSError:
    pass
{after}
"""


SLEEPER = "sleeps past its timeout"

PROGRAMS: dict[str, tuple[str, Limits]] = {
    # well-behaved
    "hello": ("print('hello')\nreturn 42", Limits(timeout=10)),
    "call": ("return await echo([1, 'two', {'three': 3.0}])", Limits(timeout=10)),
    # It prints as it starts: when the host sees that, the program runs.
    SLEEPER: ("print('up')\nimport time\ntime.sleep(30)",
              Limits(timeout=SLEEPER_TIMEOUT, kill_grace=0.1)),
    # hostile
    "spins": ("while True:\n    pass", Limits(timeout=3, kill_grace=0.1)),
    "fork bomb, spinning": (_fork_bomb("while True: pass", "while True:\n    pass"),
                            Limits(timeout=3, processes=32, kill_grace=0.1)),
    "frames at the item bound": (_flood(ITEMS - 100, 10), Limits(timeout=4, kill_grace=0.1)),
    "16 million empty arrays": (_flood(16_000_000, 1), Limits(timeout=10, kill_grace=0.1)),
    "fork bomb, sleeping": (_fork_bomb("import time; time.sleep(60)", "return 'stopped'"),
                            Limits(timeout=10, processes=64, kill_grace=0.1)),
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
    "prints without end": ("while True:\n    print('x' * 1000)", Limits(timeout=3, kill_grace=0.1)),
    "spins again": ("while True:\n    pass", Limits(timeout=3, kill_grace=0.1)),
    "allocates without bound": ("x = []\nwhile True:\n    x.append(bytearray(1 << 20))",
                                Limits(timeout=10, memory_bytes=256 << 20)),
    "writes fd 1 without end": ("import os\nchunk = b'y' * 65536\nwhile True:\n"
                                "    os.write(1, chunk)", Limits(timeout=3, kill_grace=0.1)),
    "fills the disk": ("""
chunk = b"x" * (1 << 20)
try:
    with open("fill", "wb") as f:
        while True:
            f.write(chunk)
except OSError as e:
    return e.errno
""", Limits(timeout=10, disk_bytes=32 << 20, file_bytes=None)),
    "binding raises BaseException": ("try:\n    await raises_base()\nexcept BindingError as e:\n"
                                     "    return e.type", Limits(timeout=10)),
}

WELL_BEHAVED = ("hello", "call", SLEEPER)
#: The order programs are taken in: a sleeper after every few others.
MIX = [name for name in PROGRAMS if name != SLEEPER]
MIX = [n for i, name in enumerate(MIX) for n in ((name, SLEEPER) if i % 2 else (name,))]


@dataclass
class Late:
    """One sleeper: seconds past its timeout, until its program started,
    and from its deadline to its result."""

    overshoot: float
    start: float
    end: float


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


def _work_directories() -> set[Path]:
    """This process's (other hosts on the machine have theirs)."""
    return set(Path(tempfile.gettempdir()).glob(f"tether-run-{owners.owner()}-*"))


def _cgroups() -> set[str]:
    """This process's groups (other hosts on the machine have theirs)."""
    support = cgroups.available()
    if support.version is None:
        return set()
    roots = [cgroups.ROOT / cgroups.PARENT] if support.version == 2 else \
        [cgroups.ROOT / c / cgroups.PARENT for c in ("pids", "memory", "cpu")]
    found: set[str] = set()
    for root in roots:
        for path, dirs, _ in os.walk(root):
            found.update(os.path.join(path, d) for d in dirs
                         if d.startswith(owners.owner() + "-"))
    return found


async def _lag(worst: list[float]) -> None:
    """How late the event loop wakes a task that sleeps 10 ms at a time."""
    loop = asyncio.get_running_loop()
    while True:
        before = loop.time()
        await asyncio.sleep(0.01)
        worst[0] = max(worst[0], loop.time() - before - 0.01)


def _runtime(sandbox: str, start: str) -> Runtime:
    pool = {"fork": PoolConfig(), "spawn": PoolConfig(fork_server=False), "cold": None}[start]
    return Runtime(sandbox=sandbox, pool=pool)


async def soak(runs: int, callers: int, sandbox: str, start: str,
               without: tuple[str, ...] = ()) -> int:
    mix = [name for name in MIX if name not in without]
    statuses: dict[str, collections.Counter[str]] = {n: collections.Counter() for n in PROGRAMS}
    lost: list[str] = []
    late: list[Late] = []
    started = 0
    fds_before = set(os.listdir("/proc/self/fd"))
    dirs_before = _work_directories()
    groups_before = _cgroups()
    rss_before = _rss_mb()
    load = os.getloadavg()[0]
    lag = [0.0]
    t0 = time.perf_counter()
    async with _runtime(sandbox, start) as rt:
        async def caller() -> None:
            nonlocal started
            while started < runs:
                name = mix[started % len(mix)]
                started += 1
                source, limits = PROGRAMS[name]
                begun = time.perf_counter()
                up: list[float] = []

                def seen(event: RunEvent, up: list[float] = up) -> None:
                    if isinstance(event, Printed) and not up:
                        up.append(time.perf_counter())

                try:
                    result = await asyncio.wait_for(
                        rt.run(source, bindings=[echo, raises_base], limits=limits,
                               on_event=seen if name == SLEEPER else None),
                        limits.timeout + 30)
                except BaseException as exc:  # a lost result
                    lost.append(f"{name}: {exc!r}")
                    continue
                took = time.perf_counter() - begun
                statuses[name][result.status.value] += 1
                if name == SLEEPER:
                    ran = (up[0] if up else begun) - begun
                    late.append(Late(took - limits.timeout, ran,
                                     took - ran - limits.timeout))
                    if result.status is not Status.TIMEOUT:
                        lost.append(f"{name}: {result.status.value}")
                elif name in WELL_BEHAVED and result.status is not Status.OK:
                    lost.append(f"{name}: {result.status.value} {result.error}")

        watch = asyncio.ensure_future(_lag(lag))
        await asyncio.gather(*(caller() for _ in range(callers)))
        watch.cancel()
    elapsed = time.perf_counter() - t0
    await asyncio.sleep(0.5)  # escapees' and zombies' last moments
    new_groups = _cgroups() - groups_before
    await asyncio.sleep(5)
    leaked_groups = new_groups & _cgroups()  # a leak is one that stays
    gc.collect()
    ctypes.CDLL(None).malloc_trim(0)  # what the allocator keeps is not a leak
    leaks = {
        "processes": _marked_processes(),
        "descriptors": len(set(os.listdir("/proc/self/fd")) - fds_before),
        "work directories": len(_work_directories() - dirs_before),
        "cgroups": len(leaked_groups),
    }
    print(f"{runs} runs, {callers} callers, sandbox={sandbox}, start={start}: "
          f"{elapsed:.1f} s, {runs / elapsed:.1f} runs/s; load average {load:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after" + "".join(f"; without {n}" for n in without))
    for name in PROGRAMS:
        print(f"  {name:32} {dict(statuses[name])}")
    print(f"lost: {len(lost)}" + "".join(f"\n  {line}" for line in lost[:20]))
    print("left behind: " + ", ".join(f"{k} {v}" for k, v in leaks.items()))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"host RSS: {rss_before:.1f} MB before, {_rss_mb():.1f} MB after (peak {peak:.0f} MB)")
    print(f"event loop's worst lag: {lag[0] * 1000:.0f} ms")
    worst = max(late, key=lambda x: x.overshoot, default=Late(0.0, 0.0, 0.0))
    overshoots = sorted(x.overshoot for x in late)
    if len(overshoots) >= 2:
        cuts = statistics.quantiles(overshoots, n=100)
        print(f"sleepers: {len(late)}, overshoot median {cuts[49] * 1000:.0f} ms, "
              f"p99 {cuts[98] * 1000:.0f} ms")
    print(f"worst timeout overshoot of a well-behaved run: {worst.overshoot * 1000:.0f} ms "
          f"(until its program ran {worst.start * 1000:.0f} ms, from its deadline to its "
          f"result {worst.end * 1000:.0f} ms)")
    failed = bool(lost) or any(leaks.values()) or worst.overshoot >= 0.5
    return 1 if failed else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--callers", type=int, default=20)
    parser.add_argument("--sandbox", default="namespaces")
    parser.add_argument("--start", choices=("fork", "spawn", "cold"), default="fork")
    parser.add_argument("--without", action="append", default=[], choices=MIX)
    args = parser.parse_args()
    warnings.simplefilter("ignore", RuntimeWarning)  # "process as root"
    sys.exit(asyncio.run(soak(args.runs, args.callers, args.sandbox, args.start,
                              tuple(args.without))))


if __name__ == "__main__":
    main()
