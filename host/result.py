"""What a run returns: always a RunResult, whatever the program did."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any

from tether.codec import Value


class Status(enum.StrEnum):
    OK = "ok"  # the program returned; ``value`` holds what
    ERROR = "error"  # the program raised or did not compile
    TIMEOUT = "timeout"  # the wall-clock limit passed
    LIMIT = "limit"  # a resource or size limit ended it; ``limit`` names it
    CRASHED = "crashed"  # the guest died or closed its channel early
    PROTOCOL_ERROR = "protocol_error"  # the guest broke the wire protocol
    CANCELLED = "cancelled"  # the runtime was closed while the run went on
    INVALID = "invalid"  # the pre-run check found problems; nothing ran (``diagnostics``)


@dataclass(frozen=True, slots=True)
class RunError:
    """Why a run did not end with a value: ready to show to a model.

    ``type`` is the program's exception type (``ZeroDivisionError``) or, for
    runs that ended otherwise, one of ``Timeout``, ``LimitExceeded``,
    ``GuestCrashed``, ``ProtocolError``, ``Cancelled``, ``TypeCheckError``.
    ``traceback`` shows only the program's own lines; ``line`` and ``column``
    are 1-based in the source. In a check's ``diagnostics`` ``type`` is the
    checker's code for the problem (``invalid-argument-type``, ``TS2345``).
    """

    type: str
    message: str
    traceback: str = ""
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True, slots=True)
class OutputChunk:
    stream: str  # "stdout" | "stderr"
    text: str


@dataclass(frozen=True, slots=True)
class RunStats:
    wall_time: float = 0.0  # seconds from spawn to the end of the run
    calls: int = 0  # binding calls the program made
    bytes_in: int = 0  # bytes received on fd 3
    bytes_out: int = 0  # bytes sent on fd 3
    output_truncated: bool = False  # printed output went past output_bytes
    raw_output_truncated: bool = False  # raw fd 1/2 output went past its cap
    sandbox: str = "process"  # the isolation profile the run used
    peak_memory_bytes: int | None = None  # of the whole process tree, where a cgroup measured it
    cpu_seconds: float | None = None  # the guest's user + system CPU time (10 ms resolution)
    #: The guest's exit status (-N: killed by signal N); None when the guest was
    #: killed right after DONE and is reaped after run() returned.
    exit_code: int | None = None


@dataclass(frozen=True, slots=True)
class RunResult:
    status: Status
    value: Value = None
    error: RunError | None = None
    chunks: tuple[OutputChunk, ...] = ()
    limit: str | None = None  # with status "limit": the Limits field that ended the run
    raw_stdout: str = ""  # what the child wrote to fd 1 below print (crash messages)
    raw_stderr: str = ""
    stats: RunStats = field(default_factory=RunStats)
    #: With status ``invalid``: each problem the check found, in source order.
    diagnostics: tuple[RunError, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @property
    def output(self) -> str:
        """Everything printed, stdout and stderr interleaved as written."""
        return "".join(chunk.text for chunk in self.chunks)

    @property
    def stdout(self) -> str:
        return "".join(c.text for c in self.chunks if c.stream == "stdout")

    @property
    def stderr(self) -> str:
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
        }
