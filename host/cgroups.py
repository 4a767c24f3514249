"""Per-run control groups: a memory ceiling and a process count for the whole
process tree, and the peak memory it used.

Both cgroup v2 (one hierarchy with the memory and pids controllers enabled)
and v1 (a hierarchy per controller) are supported; where neither is writable
:func:`available` says why and runs rely on rlimits alone.
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


def group_name(guest_pid: int) -> str:
    """A run's group is named after the host process that made it (which
    removes it: host/owners.py), then the guest's pid."""
    return f"{owners.owner()}-{guest_pid}-{os.urandom(4).hex()}"


@cache
def sweep_orphans() -> int:
    """Remove the empty groups of hosts that are gone (host/owners.py).
    Once per process, before its first group. Returns how many."""
    support = available()
    if support.version is None:
        return 0
    parents = {ROOT / PARENT} if support.version == 2 else \
        {ROOT / c / PARENT for c in ("memory", "pids")}
    removed = 0
    for parent in parents:
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

    def __init__(self, name: str) -> None:
        support = available()
        if support.version is None:
            raise OSError(support.detail)
        sweep_orphans()
        self.version = support.version
        if self.version == 2:
            parent = ROOT / PARENT
            parent.mkdir(exist_ok=True)
            with contextlib.suppress(OSError):
                _write(parent / "cgroup.subtree_control", "+memory +pids")
            self.dirs = {"memory": parent / name, "pids": parent / name}
        else:
            self.dirs = {c: ROOT / c / PARENT / name for c in ("memory", "pids")}
        for directory in set(self.dirs.values()):
            directory.mkdir(parents=True, exist_ok=True)
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
        """Apply a run's limits (a warm guest's group gets them at its run)."""
        if memory_bytes is not None:
            limit = "memory.max" if self.version == 2 else "memory.limit_in_bytes"
            _write(self.dirs["memory"] / limit, str(memory_bytes))
            with contextlib.suppress(OSError):  # no swapping around the ceiling
                swap = "memory.swap.max" if self.version == 2 else "memory.memsw.limit_in_bytes"
                _write(self.dirs["memory"] / swap,
                       "0" if self.version == 2 else str(memory_bytes))
        if processes is not None:
            _write(self.dirs["pids"] / "pids.max", str(processes))

    def add(self, pid: int) -> None:
        for directory in set(self.dirs.values()):
            _write(directory / "cgroup.procs", str(pid))

    @classmethod
    def holding(cls, *pids: int) -> RunCgroup:
        """A new group (named after the first pid) with ``pids`` in it; one
        that cannot join (it has exited: a start cut short) leaves no group
        and no descriptor behind."""
        group = cls(group_name(pids[0]))
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
