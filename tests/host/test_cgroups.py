"""Per-run control groups left by a host that was killed are removed by the
next host on the machine; a live host's, and those of hosts in other PID
namespaces, are not touched."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tether.host import cgroups, owners

pytestmark = pytest.mark.skipif(cgroups.available().version is None,
                                reason=cgroups.available().detail)

#: A host of its own: its first group sweeps what dead hosts left.
SWEEPS = """
from tether.host import cgroups
print(cgroups.sweep_orphans())
"""


def _parents() -> list[str]:
    if cgroups.available().version == 2:
        return [str(cgroups.ROOT / cgroups.PARENT)]
    return [str(cgroups.ROOT / c / cgroups.PARENT) for c in ("memory", "pids")]


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


def test_a_group_for_a_process_that_has_exited_leaves_nothing_behind() -> None:
    """A start cut short (the Runtime closing) kills its guest before it
    joins its group: the group is not left, nor its open files."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as alive:
        groups = {p: set(os.listdir(p)) for p in _parents()}
        descriptors = set(os.listdir("/proc/self/fd"))
        with pytest.raises(OSError):
            cgroups.RunCgroup.holding(alive.pid, gone.pid)
        assert {p: set(os.listdir(p)) for p in _parents()} == groups
        assert set(os.listdir("/proc/self/fd")) == descriptors
        assert alive.wait(5) == -9  # what had joined is ended with the group

