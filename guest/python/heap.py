"""A forked guest that will wait in the pool, while runs come far apart,
makes its heap ready for a large value.

A process that has never run anything pays a page fault for every page it
first writes, and a large value costs the guest two copies in fresh pages
(the frame it arrives in, and the decoded string or bytes). A guest that
will wait for its RUN (the fork request says so: host/guests/pool.py decides)
writes :data:`HEAP_BYTES` of heap before its HELLO
and keeps it: glibc then serves allocations below :data:`MMAP_BYTES` from
the heap, and keeps up to twice that free at the heap's top instead of
handing it back. Like the rehearsal's pages, these are written before the
guest joins its run's cgroup, so a run's peak memory does not count them.
"""

from __future__ import annotations

import contextlib
import ctypes
from typing import Final

#: Heap written before HELLO.
HEAP_BYTES: Final = 3 << 20
#: Allocations below this come from the heap, not from mmap().
MMAP_BYTES: Final = 4 << 20

_M_TRIM_THRESHOLD: Final = -1
_M_MMAP_THRESHOLD: Final = -3


def prepare() -> None:
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):  # not glibc: nothing to tune
        return
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    # The process lives for one run: memory a program frees is not handed back.
    if not (mallopt(_M_MMAP_THRESHOLD, MMAP_BYTES) and
            mallopt(_M_TRIM_THRESHOLD, 2 * MMAP_BYTES)):
        return
    with contextlib.suppress(MemoryError):  # a low memory limit: the run needs it more
        bytearray(HEAP_BYTES)  # zeroed, so written; freed at once, kept at the heap's top
