"""Which host process made a run's work directory or cgroup.

A host killed with SIGKILL removes nothing of its runs' (their processes
die with it). So their work directories and cgroups are named after their
host, ``<PID namespace>-<pid>``, and a host's first run removes those whose
host is gone. The PID namespace is part of the name because a pid means
nothing outside its own: what hosts in other containers made, in a shared
``/tmp`` or cgroup tree, is left alone. (It is written ``ns<inode>``, not
a bare number, which tether versions that named groups ``<pid>-...``
read as no name of theirs.)
"""

from __future__ import annotations

import os
from functools import cache


@cache
def _namespace() -> str:
    try:
        return f"ns{os.stat('/proc/self/ns/pid').st_ino}"
    except OSError:  # no /proc: every host here is in the one namespace
        return "ns0"


def owner() -> str:
    """This host, as its runs' names begin."""
    return f"{_namespace()}-{os.getpid()}"


def left_by_gone_host(name: str) -> bool:
    """True if ``name`` begins with a host (as :func:`owner` writes it) of
    this PID namespace that is no longer running. A pid since reused by
    another process keeps its host's leftovers: they are only left, never
    wrongly taken."""
    namespace, _, rest = name.partition("-")
    pid = rest.partition("-")[0]
    if namespace != _namespace() or not (pid.isascii() and pid.isdigit()):
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):  # someone else's process; not a pid
        return False
    return False
