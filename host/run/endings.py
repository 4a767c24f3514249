"""How a run ended, decided from what the host saw: the guest's DONE, its
exit status, the run's cgroup, its stderr. Pure functions; the session
gathers the observations and assembles the result."""

from __future__ import annotations

import signal
from dataclasses import dataclass
from typing import Any

from tether.codec import Done, ErrorCode

from ..result import RunError, Status


@dataclass(frozen=True, slots=True)
class Ending:
    """How the run ended, before the result is assembled. ``after_done``:
    the guest said DONE, so nothing of it may run on (it is killed at once)."""

    status: Status
    error: RunError | None = None
    value: Any = None
    limit: str | None = None
    after_done: bool = False
    variables: dict[str, Any] | None = None
    dropped_variables: dict[str, str] | None = None
    #: With status ``suspended``: the run's checkpoint.
    checkpoint: bytes | None = None


#: What V8 prints when --max-old-space-size is reached (the process then aborts).
HEAP_EXHAUSTED = ("JavaScript heap out of memory", "Reached heap limit")

OUT_OF_MEMORY = "the program ran out of memory"


def crash(message: str) -> Ending:
    return Ending(Status.CRASHED, RunError("GuestCrashed", message))


def cancelled(message: str) -> Ending:
    return Ending(Status.CANCELLED, RunError("Cancelled", message))


def broken_protocol(problem: object, *, after_done: bool = False) -> Ending:
    """The guest broke the protocol: ``problem`` says how."""
    return protocol_error(f"the guest broke the protocol: {problem}", after_done=after_done)


def protocol_error(message: str, kind: str = "ProtocolError", *,
                   after_done: bool = False) -> Ending:
    """The run ended on its channel: the guest broke the protocol or
    reported an ERROR, or (``kind`` InternalError) the host failed on it."""
    return Ending(Status.PROTOCOL_ERROR, RunError(kind, message), after_done=after_done)


def exit_ending(code: int, *, cgroup_out_of_memory: bool, stderr: str) -> Ending:
    """A guest that exited with status ``code`` (negative: the signal)
    without DONE: the cgroup, the status and V8's last words tell a limit
    from a crash."""
    if cgroup_out_of_memory:
        return Ending(Status.LIMIT, RunError("LimitExceeded", OUT_OF_MEMORY),
                      limit="memory_bytes")
    if code == -signal.SIGXCPU:
        return Ending(Status.LIMIT, RunError(
            "LimitExceeded", "the program used up its CPU time"), limit="cpu_seconds")
    if code < 0 and any(marker in stderr for marker in HEAP_EXHAUSTED):
        return Ending(Status.LIMIT, RunError("LimitExceeded", OUT_OF_MEMORY),
                      limit="memory_bytes")  # V8 aborts at its heap limit
    return crash(f"the guest exited ({describe_exit(code)}) before finishing")


def claims_out_of_memory(done: Done) -> bool:
    """Whether DONE's error says the program ran out of memory: Python's
    MemoryError, or Node's under RLIMIT_DATA. Only a claim: a program can
    raise MemoryError, or forge a DONE, at will."""
    e = done.error
    return e is not None and (e.type == "MemoryError" or (
        e.type == "RangeError" and "allocation failed" in e.message))


def done_ending(done: Done, *, at_memory_limit: bool,
                variables_problem: str | None = None) -> Ending:
    """The ending DONE reports; ``at_memory_limit``: the host sees the run at
    its memory limit (``host/guests/memory.py``), so an out-of-memory error
    is believed. ``variables_problem``: how DONE's variables break R-VARS-4/5
    (a forged DONE must not break the next run's RUN)."""
    if variables_problem is not None:
        return broken_protocol(variables_problem, after_done=True)
    variables: dict[str, Any] = {} if done.variables is None else {
        "variables": done.variables, "dropped_variables": done.dropped}
    if done.error is None:
        return Ending(Status.OK, value=done.value, after_done=True, **variables)
    e = done.error
    error = RunError(e.type, e.message, e.traceback, e.line)
    if e.code is ErrorCode.VALUE_TOO_LARGE:
        return Ending(Status.LIMIT, error, limit="value_bytes", after_done=True, **variables)
    if claims_out_of_memory(done) and at_memory_limit:
        return Ending(Status.LIMIT, error, limit="memory_bytes", after_done=True, **variables)
    return Ending(Status.ERROR, error, after_done=True, **variables)


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"
