"""What a run returns: always a RunResult, whatever the program did."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any

from tether.codec import Value


class Status(enum.StrEnum):
    """How a run ended: ``result.status``. A str, so ``result.status == "ok"`` works."""

    OK = "ok"  #: the program returned; ``value`` holds what
    ERROR = "error"  #: the program raised or did not compile
    TIMEOUT = "timeout"  #: the wall-clock limit passed
    LIMIT = "limit"  #: a resource or size limit ended it; ``limit`` names it
    CRASHED = "crashed"  #: the guest died or closed its channel early
    PROTOCOL_ERROR = "protocol_error"  #: the guest broke the wire protocol
    CANCELLED = "cancelled"  #: the runtime was closed while the run went on
    INVALID = "invalid"  #: the pre-run check found problems; nothing ran (``diagnostics``)
    SUSPENDED = "suspended"  #: a binding suspended it; ``checkpoint`` resumes it


@dataclass(frozen=True, slots=True)
class RunError:
    """Why a run did not end with a value: ready to show to a model.

    ``type`` is the program's exception type (``ZeroDivisionError``) or, for
    runs that ended otherwise, one of ``Timeout``, ``LimitExceeded``,
    ``GuestCrashed``, ``ProtocolError``, ``Cancelled``, ``TypeCheckError``,
    ``Suspended``, ``ResumeDiverged``.
    ``traceback`` shows only the program's own lines; ``line`` and ``column``
    are 1-based in the source. In a check's ``diagnostics`` ``type`` is the
    checker's code for the problem (``invalid-argument-type``, ``TS2345``).
    """

    #: The program's exception type (``ZeroDivisionError``) or, for runs that
    #: ended otherwise, one of ``Timeout``, ``LimitExceeded``,
    #: ``GuestCrashed``, ``ProtocolError``, ``Cancelled``.
    type: str
    #: The exception's message, or what ended the run.
    message: str
    #: The program's own frames only, with lines of its source, ending with
    #: ``type: message``; empty when the run did not end in the program, except
    #: for a timeout or cancellation: where the guest says it was stopped.
    traceback: str = ""
    #: The 1-based line of the source that raised (or did not compile).
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True, slots=True)
class CheckReport:
    """Whether the check before a run could read the program: ``result.check``
    (None when no check was asked for). A program the check could not finish
    (no checker installed, larger than the check reads, out of time, a
    checker that failed) runs unchecked, and says so here."""

    #: The checker read the whole program: ``diagnostics`` is all it found.
    checked: bool
    #: Why the program was not checked (empty when it was).
    reason: str = ""


class Diagnostics(tuple[RunError, ...]):
    """What :meth:`Runtime.check <tether.Runtime.check>` returns: the
    problems found (a tuple, empty when there are none), and whether the
    program was checked at all: an empty tuple with ``checked`` False means
    that no checker could say (``reason`` says why)."""

    checked: bool
    reason: str

    def __new__(cls, problems: tuple[RunError, ...] = (), *, checked: bool = True,
                reason: str = "") -> Diagnostics:
        made = super().__new__(cls, problems)
        made.checked = checked
        made.reason = reason
        return made

    @property
    def report(self) -> CheckReport:
        """The same, as a run's result says it."""
        return CheckReport(self.checked, self.reason)


@dataclass(frozen=True, slots=True)
class OutputChunk:
    """Text the program printed, on one stream, in the order written."""

    stream: str  #: ``"stdout"`` or ``"stderr"``
    text: str  #: what was printed


@dataclass(frozen=True, slots=True)
class RunStats:
    """What a run used: ``result.stats``."""

    wall_time: float = 0.0  #: seconds from spawn to the end of the run
    calls: int = 0  #: binding calls the program made
    bytes_in: int = 0  #: bytes received on fd 3
    bytes_out: int = 0  #: bytes sent on fd 3
    #: Printed output went past ``Limits.output_bytes`` and its middle was dropped.
    output_truncated: bool = False
    raw_output_truncated: bool = False  #: raw fd 1/2 output went past its cap
    sandbox: str = "process"  #: the isolation profile the run used
    #: Of the whole process tree, where a cgroup measured it.
    peak_memory_bytes: int | None = None
    #: The guest's user + system CPU time (10 ms resolution).
    cpu_seconds: float | None = None
    #: The guest's exit status (-N for killed by signal N); None when the host
    #: killed the guest itself (right after DONE, at a timeout, on a
    #: cancellation) and reaps it after run() returned.
    exit_code: int | None = None


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a run ended, whatever the program did: what ``Runtime.run`` returns."""

    status: Status  #: how the run ended
    value: Value = None  #: what the program returned, with status ``ok``
    error: RunError | None = None  #: why there is no value, with every other status
    chunks: tuple[OutputChunk, ...] = ()  #: the printed output, stream by stream
    limit: str | None = None  #: with status ``limit``, the Limits field that ended the run
    #: What the child wrote to fd 1 below print (crash messages).
    raw_stdout: str = ""
    raw_stderr: str = ""  #: what the child wrote to fd 2 below print
    stats: RunStats = field(default_factory=RunStats)  #: what the run used
    #: With status ``invalid``: each problem the check found, in source order.
    diagnostics: tuple[RunError, ...] = ()
    #: With ``run(check=True)``: whether the program was checked, or why not.
    check: CheckReport | None = None
    #: The program's top-level names at its end whose values are in the value
    #: model, when the run was given ``variables`` (None otherwise, and when
    #: the run ended before the program did: a timeout, a crash).
    variables: dict[str, Value] | None = None
    #: Top-level names left out of ``variables``, each with why (outside the
    #: value model, over ``Limits.variables_bytes``).
    dropped_variables: dict[str, str] = field(default_factory=dict)
    #: With status ``suspended``: what ``Runtime.resume`` needs to go on
    #: (CBOR bytes, to store as they are).
    checkpoint: bytes | None = None

    @property
    def ok(self) -> bool:
        """``status`` is ``ok``: the program returned ``value``."""
        return self.status is Status.OK

    @property
    def output(self) -> str:
        """Everything printed, stdout and stderr interleaved as written."""
        return "".join(chunk.text for chunk in self.chunks)

    @property
    def stdout(self) -> str:
        """What the program printed to standard output."""
        return "".join(c.text for c in self.chunks if c.stream == "stdout")

    @property
    def stderr(self) -> str:
        """What the program printed to standard error."""
        return "".join(c.text for c in self.chunks if c.stream == "stderr")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, except that bytes in ``value`` stay bytes."""
        return {
            "status": str(self.status),
            "value": self.value,
            "output": self.output,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "error": None if self.error is None else asdict(self.error),
            "limit": self.limit,
            "raw_stdout": self.raw_stdout,
            "raw_stderr": self.raw_stderr,
            "stats": asdict(self.stats),
            "diagnostics": [asdict(d) for d in self.diagnostics],
            "check": None if self.check is None else asdict(self.check),
            "variables": self.variables,
            "dropped_variables": dict(self.dropped_variables),
            "checkpoint": self.checkpoint,
        }
