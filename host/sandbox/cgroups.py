"""Per-run control groups: a memory ceiling and a process count for the whole
process tree, the peak memory it used, and a CPU share below the host's.

Both cgroup v2 (one hierarchy with the memory and pids controllers enabled)
and v1 (a hierarchy per controller) are supported; where neither is writable
:func:`available` says why and runs rely on rlimits alone.

Every run's group is a child of one parent, ``tether``. Where the cpu
controller is there too (v2: enabled for the parent; v1: a writable ``cpu``
hierarchy), all guests together weigh what one process of the host does
(without it, each guest's session would weigh as much, under the kernel's
autogroups): however many processes programs set spinning, the host's own
work (other runs' starts, timeouts, kills, results) keeps the CPU it needs,
and each run, one group among the parent's children, gets the same share as
every other run, whatever number of processes it has.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from . import owners

ROOT = Path("/sys/fs/cgroup")
PARENT = "tether"
#: The parent's CPU weight, all guests together, against a host process at
#: nice 0 (v1 ``cpu.shares``: 1024; v2 ``cpu.weight``: 100).
GUESTS_CPU_SHARES = 1024
GUESTS_CPU_WEIGHT = 100
#: The CPU weight, in runs' groups, of a group whose work the host waits
#: for: a template's (host/guests/zygote.py) under v2, which forks every guest and
#: holds the inits of forked guests' namespaces (under v1 it stays out of the
#: cpu hierarchy, weighing as a process of the host), and a killed run's,
#: whose processes need the CPU to die (the kernel tears a process down in
#: its own time).
HOST_WORK_CPU_FACTOR = 100
#: A v1 memory limit file's value for "no limit".
_V1_UNLIMITED = "-1"


@dataclass(frozen=True, slots=True)
class CgroupSupport:
    version: int | None  # 2, 1, or None when unusable
    detail: str


@cache
def available() -> CgroupSupport:
    v2 = ROOT / "cgroup.controllers"
    if v2.exists():
        controllers = v2.read_text().split()
        if {"memory", "pids"} <= set(controllers) and os.access(ROOT, os.W_OK):
            return CgroupSupport(2, "cgroup v2 with memory and pids")
        return CgroupSupport(None, f"cgroup v2 without memory/pids controllers ({controllers})")
    if all(os.access(ROOT / c, os.W_OK) for c in ("memory", "pids")):
        return CgroupSupport(1, "cgroup v1 memory and pids hierarchies")
    return CgroupSupport(None, "no writable cgroup memory and pids controllers")


class LimitNotSet(OSError):
    """A limit file of a run's group refused the run's value (the run must
    not start: its guest would run under another limit)."""


def memory_writes(version: int, wanted: int | None, current: int, *,
                  swap: bool) -> tuple[tuple[str, str], ...]:
    """The writes, in order, that make a group's memory ceiling ``wanted``
    bytes (None: no ceiling) where it is ``current`` bytes now (the limit
    file as read: v1 reads a huge number for "none").

    v2: ``memory.max``, and ``memory.swap.max`` 0 under a ceiling (no swapping
    around it), ``max`` without one; the two are independent. v1: memory plus
    swap (``memory.memsw.limit_in_bytes``) must stay at or above memory
    alone at every step, or the kernel refuses the write (EINVAL): raising,
    memsw is written first; lowering, memory is. ``swap``: the group has the
    swap file (swap accounting is on)."""
    if version == 2:
        writes = [("memory.max", "max" if wanted is None else str(wanted))]
        if swap:
            writes.append(("memory.swap.max", "max" if wanted is None else "0"))
        return tuple(writes)
    value = _V1_UNLIMITED if wanted is None else str(wanted)
    memory = ("memory.limit_in_bytes", value)
    if not swap:
        return (memory,)
    both = ("memory.memsw.limit_in_bytes", value)
    raising = wanted is None or wanted > current
    return (both, memory) if raising else (memory, both)


def processes_write(wanted: int | None) -> tuple[str, str]:
    """The write that makes a group's process count ``wanted`` (None: no bound)."""
    return ("pids.max", "max" if wanted is None else str(wanted))


def _write(path: Path, text: str) -> None:
    """A control file written in one write(2) (no buffering: a file of the
    cgroup filesystem is written as one value)."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _read(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 64 * 1024):
            chunks.append(chunk)
        return b"".join(chunks).decode()
    finally:
        os.close(fd)


def _set(path: Path, value: str) -> None:
    try:
        _write(path, value)
    except OSError as exc:
        raise LimitNotSet(f"{path.name} = {value}: {exc.strerror or exc}") from exc


def group_name(guest_pid: int) -> str:
    """A run's group is named after the host process that made it (which
    removes it: host/sandbox/owners.py), then the guest's pid."""
    return f"{owners.owner()}-{guest_pid}-{os.urandom(4).hex()}"


@dataclass(frozen=True, slots=True)
class _Parents:
    """Where the runs' groups are made, per controller (``cpu`` only where
    the guests can be given a CPU weight), and whether they have a swap
    limit file (swap accounting is on)."""

    dirs: dict[str, Path]
    swap: bool


@cache
def _parents() -> _Parents:
    """The parent groups, made once per process (again after a failure)."""
    if available().version == 2:
        parent = ROOT / PARENT
        parent.mkdir(exist_ok=True)
        with contextlib.suppress(OSError):
            _write(parent / "cgroup.subtree_control", "+memory +pids")
        dirs = {"memory": parent, "pids": parent}
        with contextlib.suppress(OSError):  # only where the machine gives cpu to the parent
            _write(parent / "cpu.weight", str(GUESTS_CPU_WEIGHT))
            _write(parent / "cgroup.subtree_control", "+cpu")
            dirs["cpu"] = parent
        return _Parents(dirs, (parent / "memory.swap.max").exists())
    dirs = {c: ROOT / c / PARENT for c in ("memory", "pids")}
    for directory in dirs.values():
        directory.mkdir(exist_ok=True)
    with contextlib.suppress(OSError):  # only where the cpu hierarchy is mounted and writable
        cpu = ROOT / "cpu" / PARENT
        cpu.mkdir(exist_ok=True)
        _write(cpu / "cpu.shares", str(GUESTS_CPU_SHARES))
        dirs["cpu"] = cpu
    return _Parents(dirs, (dirs["memory"] / "memory.memsw.limit_in_bytes").exists())


@cache
def sweep_orphans() -> int:
    """Remove the empty groups of hosts that are gone (host/sandbox/owners.py).
    Once per process, before its first group. Returns how many."""
    if available().version is None:
        return 0
    removed = 0
    for parent in set(_parents().dirs.values()):
        with contextlib.suppress(OSError):
            for entry in os.scandir(parent):
                if entry.is_dir(follow_symlinks=False) and owners.left_by_gone_host(entry.name):
                    with contextlib.suppress(OSError):  # not empty, or gone already
                        os.rmdir(entry.path)
                        removed += 1
    return removed


class RunCgroup:
    """One run's group(s). Create, :meth:`add` processes, read, :meth:`remove`.
    Creating, joining and removing a group wait for the kernel's cgroup
    lock, which a process moving between groups anywhere on the machine may
    hold for an RCU grace period: never on the event loop (figures:
    bench/README.md)."""

    def __init__(self, name: str, *, template: bool = False) -> None:
        """``template``: the group of a template (host/guests/zygote.py), given
        HOST_WORK_CPU_FACTOR times a run's CPU weight (v2), or left in the
        host's cpu group (v1)."""
        support = available()
        if support.version is None:
            raise OSError(support.detail)
        parents = _parents()
        sweep_orphans()
        self.version = support.version
        self._swap = parents.swap
        self.dirs = {controller: parent / name for controller, parent in parents.dirs.items()
                     if not (template and controller == "cpu" and self.version == 1)}
        for directory in set(self.dirs.values()):
            directory.mkdir(exist_ok=True)
        self._hurried = False
        if template:
            self.hurry()
        # Opened now, read once at the end of the run: then a read is all
        # the result waits for.
        self._peak_fd = -1
        with contextlib.suppress(OSError):
            self._peak_fd = os.open(self.dirs["memory"] / self._peak_name,
                                    os.O_RDONLY | os.O_CLOEXEC)

    @property
    def _peak_name(self) -> str:
        return "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"

    def set_limits(self, *, memory_bytes: int | None, processes: int | None) -> None:
        """Make the group's ceilings a run's own, None meaning none, whatever
        they were before (a warm guest's group has its pool's). Raises
        LimitNotSet where the kernel refuses one."""
        memory = self.dirs["memory"]
        current = 0
        if self.version == 1 and self._swap:
            try:
                current = int(_read(memory / "memory.limit_in_bytes"))
            except (OSError, ValueError) as exc:
                raise LimitNotSet(f"memory.limit_in_bytes could not be read: {exc}") from exc
        for name, value in memory_writes(self.version, memory_bytes, current, swap=self._swap):
            _set(memory / name, value)
        name, value = processes_write(processes)
        _set(self.dirs["pids"] / name, value)

    def hurry(self) -> None:
        """Give the group HOST_WORK_CPU_FACTOR times a run's CPU weight (once):
        a template's, or a run's whose every process was sent SIGKILL, so no
        program code runs with it."""
        if self._hurried or "cpu" not in self.dirs:
            return
        self._hurried = True
        name, value = ("cpu.weight", 100 * HOST_WORK_CPU_FACTOR) if self.version == 2 \
            else ("cpu.shares", 1024 * HOST_WORK_CPU_FACTOR)
        with contextlib.suppress(OSError):  # where the kernel bounds weights lower
            _write(self.dirs["cpu"] / name, str(value))

    def add(self, pid: int) -> None:
        for directory in set(self.dirs.values()):
            _write(directory / "cgroup.procs", str(pid))

    @classmethod
    def holding(cls, *pids: int, template: bool = False) -> RunCgroup:
        """A new group (named after the first pid) with ``pids`` in it; one
        that cannot join (it has exited: a start cut short) leaves no group
        and no descriptor behind."""
        group = cls(group_name(pids[0]), template=template)
        try:
            for pid in pids:
                group.add(pid)
        except BaseException:
            group.remove()
            raise
        return group

    def peak_memory(self) -> int | None:
        try:
            if self._peak_fd >= 0:
                return int(os.pread(self._peak_fd, 64, 0))
            fd = os.open(self.dirs["memory"] / self._peak_name, os.O_RDONLY)
            try:
                return int(os.read(fd, 64))
            finally:
                os.close(fd)
        except (OSError, ValueError):
            return None

    def out_of_memory(self) -> bool:
        """Whether the memory ceiling was hit hard enough to kill."""
        counts = self._counts("memory.events" if self.version == 2 else "memory.oom_control")
        return counts.get("oom_kill", "0").strip() not in ("0", "")

    def ceiling_reached(self) -> bool:
        """Whether the run's memory use ran into the group's ceiling."""
        if self.out_of_memory():
            return True
        if self.version == 2:
            return self._counts("memory.events").get("max", "0").strip() not in ("0", "")
        try:
            return int(_read(self.dirs["memory"] / "memory.failcnt")) > 0
        except (OSError, ValueError):
            return False

    def _counts(self, name: str) -> dict[str, str]:
        """A memory controller file of ``key value`` lines (none if unreadable)."""
        try:
            lines = _read(self.dirs["memory"] / name).splitlines()
        except OSError:
            return {}
        return dict(line.split(maxsplit=1) for line in lines if " " in line)

    def members(self) -> list[int]:
        """The processes in the group now (as the host sees their pids)."""
        try:
            return [int(pid) for pid in _read(self.dirs["pids"] / "cgroup.procs").split()]
        except (OSError, ValueError):
            return []

    def signal_members(self) -> bool:
        """SIGKILL every process in the group once (whatever its session or
        process group: a setsid()-ed escapee cannot leave its cgroup). True
        if there was any."""
        pids = self.members()
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return bool(pids)

    def kill_all(self) -> None:
        """SIGKILL the group's processes until none is left (a process forking
        meanwhile puts its child in the group too; pids.max bounds them)."""
        for _ in range(500):
            if not self.signal_members():
                return
            time.sleep(0.002)

    def remove(self) -> None:
        """Kill what is left in the group, then remove the group(s) (a dying
        process may take a moment to leave, hence the short retry)."""
        self.kill_all()
        if self._peak_fd >= 0:
            os.close(self._peak_fd)
            self._peak_fd = -1
        for directory in set(self.dirs.values()):
            for _ in range(50):
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.002)
