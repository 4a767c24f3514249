"""A run's :class:`RunResult`, assembled from how it ended (host/run/endings.py)
and what the host kept and measured of it: the printed output, the raw
streams, the guest's statistics and the bytes on its channel."""

from __future__ import annotations

from dataclasses import dataclass

from ..guests.launch import GuestProcess
from ..result import RunResult, RunStats
from .endings import Ending
from .output import CappedOutput


@dataclass(frozen=True, slots=True)
class Measured:
    """What the host measured of a run, besides its output."""

    wall_time: float
    cpu_seconds: float | None
    calls: int
    bytes_in: int
    bytes_out: int
    #: The reaped guest's status (None: reaped after the result).
    exit_code: int | None


def assemble(ending: Ending, output: CappedOutput, process: GuestProcess,
             measured: Measured) -> RunResult:
    """The result of a run that ended with ``ending``."""
    child = process.child
    child.drain_pipes()
    return RunResult(
        status=ending.status,
        value=ending.value,
        error=ending.error,
        chunks=output.chunks(),
        limit=ending.limit,
        raw_stdout=child.raw_stdout.text(),
        raw_stderr=child.raw_stderr.text(),
        variables=ending.variables,
        dropped_variables=ending.dropped_variables or {},
        checkpoint=ending.checkpoint,
        stats=RunStats(
            sandbox=process.sandbox_name,
            cpu_seconds=measured.cpu_seconds,
            peak_memory_bytes=process.cgroup.peak_memory() if process.cgroup else None,
            wall_time=measured.wall_time,
            calls=measured.calls,
            bytes_in=measured.bytes_in,
            bytes_out=measured.bytes_out,
            output_truncated=output.truncated,
            raw_output_truncated=child.raw_stdout.truncated or child.raw_stderr.truncated,
            exit_code=None if measured.exit_code is None
            else process.guest_status(measured.exit_code),
        ),
    )
