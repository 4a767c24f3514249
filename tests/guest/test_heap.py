"""A forked guest that will wait in the pool makes its heap ready for a
large value before its HELLO (guest/python/heap.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

#: In a process of its own: the heap made ready (or not), then a 1 MB value
#: taken as a guest takes it (a frame's buffer, the decoded string); prints
#: the page faults that cost.
TAKES_A_LARGE_VALUE = """
import resource, sys
from tether.guest.python import heap
if sys.argv[1] == "prepared":
    heap.prepare()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
frame = bytearray(1 << 20)
text = str(frame, "ascii")
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""

#: Two megabytes of fresh pages are 512 faults.
PAGES = (2 << 20) // 4096

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's heap")


def faults(case: str) -> int:
    done = subprocess.run([sys.executable, "-c", TAKES_A_LARGE_VALUE, case],
                          capture_output=True, text=True, timeout=60, check=True)
    return int(done.stdout)


def test_a_prepared_heap_holds_a_large_value_in_pages_already_written() -> None:
    assert faults("prepared") < PAGES // 4


def test_without_it_the_pages_are_fresh() -> None:
    assert faults("plain") > PAGES // 2
