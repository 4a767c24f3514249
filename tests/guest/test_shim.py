"""The CPython shim's rehearsal: a whole run's path, against an in-memory
host, that leaves the process as it found it."""

from __future__ import annotations

import sys

from tether.codec import Call, Done, Hello, Output
from tether.guest.python import shim


def test_the_rehearsal_takes_a_run_through_the_whole_guest_path() -> None:
    stdout, stderr = sys.stdout, sys.stderr
    seen = shim.rehearse()
    assert (sys.stdout, sys.stderr) == (stdout, stderr)
    assert [type(m) for m in seen] == [Hello, Call, Output, Done]
    assert seen[-1].value == [1, {"a": 1.5, "b": None}]
