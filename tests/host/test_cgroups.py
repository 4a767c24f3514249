"""Per-run control groups: those left by a host that was killed are removed
by the next host on the machine (a live host's, and those of hosts in other
PID namespaces, are not touched); a run's ceilings are written in an order
every cgroup version accepts, whatever they were before."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tether.host.sandbox import cgroups, owners

writable = pytest.mark.skipif(cgroups.available().version is None,
                              reason=cgroups.available().detail)

#: A host of its own: its first group sweeps what dead hosts left.
SWEEPS = """
from tether.host.sandbox import cgroups
print(cgroups.sweep_orphans())
"""


def _parents() -> list[str]:
    if cgroups.available().version == 2:
        return [str(cgroups.ROOT / cgroups.PARENT)]
    return [str(cgroups.ROOT / c / cgroups.PARENT) for c in ("memory", "pids", "cpu")
            if (cgroups.ROOT / c / cgroups.PARENT).is_dir()]


def _own_groups() -> dict[str, set[str]]:
    """This process's groups, per parent (other hosts on the machine make
    and remove theirs meanwhile)."""
    return {p: {n for n in os.listdir(p) if n.startswith(owners.owner() + "-")}
            for p in _parents()}


@writable
def test_a_killed_hosts_groups_are_swept_and_a_live_ones_kept() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # its pid names a host that is no more
    namespace = owners.owner().split("-")[0]
    orphan = f"{namespace}-{gone.pid}-1-{os.urandom(4).hex()}"
    alive = cgroups.group_name(1)  # this process's own
    elsewhere = f"ns1-{gone.pid}-1-{os.urandom(4).hex()}"  # that pid in another PID namespace
    kept = (alive, elsewhere)
    for parent in _parents():
        for name in (orphan, *kept):
            os.makedirs(os.path.join(parent, name))
    try:
        done = subprocess.run([sys.executable, "-c", SWEEPS], capture_output=True,
                              text=True, timeout=60, check=True)
        assert int(done.stdout) >= len(_parents())
        for parent in _parents():
            assert not os.path.exists(os.path.join(parent, orphan))
            assert all(os.path.isdir(os.path.join(parent, name)) for name in kept)
    finally:
        for parent in _parents():
            for name in (orphan, *kept):
                if os.path.isdir(os.path.join(parent, name)):
                    os.rmdir(os.path.join(parent, name))


@writable
def test_a_group_for_a_process_that_has_exited_leaves_nothing_behind() -> None:
    """A start cut short (the Runtime closing) kills its guest before it
    joins its group: the group is not left, nor its open files."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as alive:
        groups = _own_groups()
        descriptors = set(os.listdir("/proc/self/fd"))
        with pytest.raises(OSError):
            cgroups.RunCgroup.holding(alive.pid, gone.pid)
        assert _own_groups() == groups
        assert set(os.listdir("/proc/self/fd")) == descriptors
        assert alive.wait(5) == -9  # what had joined is ended with the group


# -- the order of a run's ceilings ----------------------------------------------------

#: What cgroup v1 reads back for "no limit" (PAGE_COUNTER_MAX pages of 4 KiB).
V1_NONE = 9223372036854771712


class V1Memory:
    """cgroup v1's rule for a group's two memory limits: memory plus swap
    never below memory alone (mm/memcontrol-v1.c refuses with EINVAL)."""

    def __init__(self, memory: int, both: int) -> None:
        assert both >= memory
        self.memory, self.both = memory, both

    def write(self, name: str, text: str) -> None:
        value = V1_NONE if text == "-1" else int(text)
        if name == "memory.limit_in_bytes":
            if value > self.both:
                raise OSError(22, "Invalid argument")
            self.memory = value
        else:
            assert name == "memory.memsw.limit_in_bytes"
            if value < self.memory:
                raise OSError(22, "Invalid argument")
            self.both = value


LIMITS = st.none() | st.integers(1 << 20, 1 << 40)


@given(before=st.tuples(LIMITS, LIMITS), wanted=LIMITS)
def test_v1_accepts_every_ceiling_from_every_other(before: tuple[int | None, int | None],
                                                   wanted: int | None) -> None:
    memory, both = (V1_NONE if b is None else b for b in before)
    group = V1Memory(min(memory, both), max(memory, both))
    for name, text in cgroups.memory_writes(1, wanted, group.memory, swap=True):
        group.write(name, text)
    expected = V1_NONE if wanted is None else wanted
    assert (group.memory, group.both) == (expected, expected)


def test_v1_raises_memory_and_swap_first_and_lowers_memory_first() -> None:
    both, memory = "memory.memsw.limit_in_bytes", "memory.limit_in_bytes"
    gib, mib = 1 << 30, 256 << 20
    assert cgroups.memory_writes(1, 2 * gib, mib, swap=True) == (
        (both, str(2 * gib)), (memory, str(2 * gib)))
    assert cgroups.memory_writes(1, mib, 2 * gib, swap=True) == ((memory, str(mib)), (both, str(mib)))
    assert cgroups.memory_writes(1, None, mib, swap=True) == ((both, "-1"), (memory, "-1"))
    # Without swap accounting there is no memory+swap limit to keep in step.
    assert cgroups.memory_writes(1, None, mib, swap=False) == ((memory, "-1"),)


def test_v2_writes_its_independent_limits_and_none_lifts_them() -> None:
    mib = 256 << 20
    assert cgroups.memory_writes(2, mib, 0, swap=True) == (
        ("memory.max", str(mib)), ("memory.swap.max", "0"))
    assert cgroups.memory_writes(2, None, 0, swap=True) == (
        ("memory.max", "max"), ("memory.swap.max", "max"))
    assert cgroups.memory_writes(2, mib, 0, swap=False) == (("memory.max", str(mib)),)


def test_a_run_without_a_process_bound_lifts_its_pools() -> None:
    assert cgroups.processes_write(64) == ("pids.max", "64")
    assert cgroups.processes_write(None) == ("pids.max", "max")
