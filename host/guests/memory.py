"""Whether a guest is at its memory limit, from what the host measured:
the run's cgroup, or the guest's own use as its rlimit counts it. A
guest's claim to have run out of memory is believed only then."""

from __future__ import annotations

from .languages import NODE_MIN_DATA

#: A guest that reports running out of memory is believed when it has used
#: this much of its memory rlimit (what is left is smaller than most requests)...
NEAR_THE_LIMIT = 0.9
#: ...or when the run's cgroup saw this much of it resident: at its
#: address-space limit a process has at least this share in memory, the rest
#: being files the interpreter mapped and never touched.
RESIDENT_SHARE = 0.5


def at_memory_limit(limit: int | None, language: str, *, ceiling_reached: bool,
                    peak: int | None, used: int | None) -> bool:
    """Whether the run is at its memory ``limit``: the cgroup's ceiling was
    reached or its ``peak`` is resident enough, or the guest's own use as
    its rlimit counts it (``used``: address space for Python, data for Node)
    is near that rlimit."""
    if limit is None:
        return False
    if ceiling_reached or (peak is not None and peak >= limit * RESIDENT_SHARE):
        return True
    floor = limit if language == "python" else max(limit, NODE_MIN_DATA)
    return used is not None and used >= floor * NEAR_THE_LIMIT
