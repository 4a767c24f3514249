"""How a run ended, from what the host saw: the pure decision, as tables
(host behaviour end to end is tests/host/test_endings.py)."""

from __future__ import annotations

import signal

import pytest

from tether.codec import Done, ErrorCode, ProgramError
from tether.host.guests.languages import NODE_MIN_DATA
from tether.host.guests.memory import at_memory_limit
from tether.host.result import Status
from tether.host.run.endings import done_ending, exit_ending

MiB = 1024 * 1024
HEAP = "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"


@pytest.mark.parametrize(("code", "oom", "stderr", "status", "limit"), [
    (0, False, "", Status.CRASHED, None),
    (1, False, "Traceback...", Status.CRASHED, None),
    (-signal.SIGKILL, True, "", Status.LIMIT, "memory_bytes"),
    (0, True, "", Status.LIMIT, "memory_bytes"),  # the cgroup saw it, whatever the status
    (-signal.SIGXCPU, False, "", Status.LIMIT, "cpu_seconds"),
    (-signal.SIGABRT, False, HEAP, Status.LIMIT, "memory_bytes"),
    (-signal.SIGTRAP, False, "Reached heap limit", Status.LIMIT, "memory_bytes"),
    (1, False, HEAP, Status.CRASHED, None),  # printed by the program, which then exited
    (-signal.SIGSEGV, False, "", Status.CRASHED, None),
])
def test_an_exit_without_done(code: int, oom: bool, stderr: str, status: Status,
                              limit: str | None) -> None:
    ending = exit_ending(code, cgroup_out_of_memory=oom, stderr=stderr)
    assert (ending.status, ending.limit) == (status, limit)
    assert not ending.after_done


def test_a_crash_names_the_exit() -> None:
    error = exit_ending(-signal.SIGSEGV, cgroup_out_of_memory=False, stderr="").error
    assert error is not None and "killed by SIGSEGV" in error.message
    error = exit_ending(3, cgroup_out_of_memory=False, stderr="").error
    assert error is not None and "exit status 3" in error.message
    error = exit_ending(-99, cgroup_out_of_memory=False, stderr="").error
    assert error is not None and "signal 99" in error.message


def _error(type_: str, message: str = "", code: ErrorCode | None = None) -> Done:
    return Done(error=ProgramError(type_, message, code=code))


@pytest.mark.parametrize(("done", "at_limit", "status", "limit"), [
    (Done(value=42), False, Status.OK, None),
    (Done(value=42), True, Status.OK, None),
    (_error("ValueError", "bad"), True, Status.ERROR, None),
    (_error("ValueTooLarge", "", ErrorCode.VALUE_TOO_LARGE), False, Status.LIMIT, "value_bytes"),
    (_error("MemoryError"), True, Status.LIMIT, "memory_bytes"),
    (_error("MemoryError"), False, Status.ERROR, None),  # only the program's claim
    (_error("RangeError", "Array buffer allocation failed"), True, Status.LIMIT,
     "memory_bytes"),
    (_error("RangeError", "Invalid array length"), True, Status.ERROR, None),
])
def test_a_done(done: Done, at_limit: bool, status: Status, limit: str | None) -> None:
    ending = done_ending(done, at_memory_limit=at_limit)
    assert (ending.status, ending.limit) == (status, limit)
    assert ending.after_done
    if status is Status.OK:
        assert ending.value == 42 and ending.error is None


@pytest.mark.parametrize(("limit", "language", "seen", "expected"), [
    (None, "python", (True, 10**12, 10**12), False),  # no limit: never at it
    (100 * MiB, "python", (True, None, None), True),
    (100 * MiB, "python", (False, 50 * MiB, None), True),
    (100 * MiB, "python", (False, 49 * MiB, None), False),
    (100 * MiB, "python", (False, None, 90 * MiB), True),
    (100 * MiB, "python", (False, None, 89 * MiB), False),
    (16 * MiB, "javascript", (False, None, 15 * MiB), False),  # Node's data floor
    (16 * MiB, "javascript", (False, None, NODE_MIN_DATA), True),
    (100 * MiB, "typescript", (False, None, 95 * MiB), True),
])
def test_at_the_memory_limit(limit: int | None, language: str,
                             seen: tuple[bool, int | None, int | None], expected: bool) -> None:
    """``seen``: the cgroup's ceiling reached, its peak, the guest's own use."""
    ceiling, peak, used = seen
    assert at_memory_limit(limit, language, ceiling_reached=ceiling, peak=peak,
                           used=used) is expected


@pytest.mark.parametrize("done", [Done(value=1, variables={"x": 1}, dropped={}),
                                  Done(error=ProgramError("ValueError", "bad"),
                                       variables={"x": 1}, dropped={"f": "a function"})])
def test_a_done_keeps_its_variables(done: Done) -> None:
    """R-VARS-4: whatever DONE reports, its variables go to the result."""
    ending = done_ending(done, at_memory_limit=False)
    assert (ending.variables, ending.dropped_variables) == (done.variables, done.dropped)


def test_a_done_whose_variables_break_the_rules_is_a_protocol_error() -> None:
    """R-VARS-5: a forged DONE's variables are not carried into a later RUN."""
    done = Done(value=1, variables={"x": 1}, dropped={})
    ending = done_ending(done, at_memory_limit=False, variables_problem="too big")
    assert ending.status is Status.PROTOCOL_ERROR and ending.after_done
    assert ending.variables is None
    assert ending.error is not None and ending.error.message.endswith("too big")
