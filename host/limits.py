"""Per-run limits, with the defaults of spec §10 and the host's own."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from tether.codec import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_FRAME_BYTES,
    DEFAULT_VALUE_BYTES,
    MAX_VARIABLES_BYTES,
    RunLimits,
)

MiB = 1024 * 1024
#: The largest resource limit (``memory_bytes``, ``open_files``, ...): an
#: rlimit is a signed 64-bit number to prlimit.
MAX_RESOURCE = 2**62
#: The largest ``cpu_seconds`` (about 317 years), and the most a huge
#: ``timeout`` makes it: the kernel counts RLIMIT_CPU (its hard limit one
#: more than ``cpu_seconds``) in nanoseconds, in 64 bits; past that it wraps
#: around to a limit the program reaches at once.
MAX_CPU_SECONDS = 10**10
#: The fields that are resources (None: not limited).
_RESOURCES = ("memory_bytes", "cpu_seconds", "open_files", "file_bytes", "processes",
              "disk_bytes")


@dataclass(frozen=True, slots=True)
class Limits:
    """What one run may use. Every field has a default; pass only what you change.

    Time, in seconds:

    - ``timeout``: wall-clock limit for the whole run, the wait for its
      guest included (status ``timeout``);
      its clock stands still while an approval hook waits, up to
      ``approval_pause``.
    - ``call_timeout``: limit for one binding call (the program gets a
      ``BindingError`` of code CALL_TIMEOUT); None: only ``timeout``.
    - ``kill_grace``: time between SIGTERM and SIGKILL when a run is stopped.
    - ``approval_timeout``: the longest one approval hook may take to answer;
      then the call is denied.
    - ``approval_pause``: the most the run's clock stands still for
      approvals, in all; past it the clock runs on while approvals wait, so
      no run outlives ``timeout`` + ``approval_pause`` (0: approvals never
      stop the clock). The program's CPU time (``cpu_seconds``) never stops.

    Bytes:

    - ``output_bytes``: printed output kept (both streams, UTF-8): past it
      the first and the last half are kept, a line between them says how
      much of the middle was dropped, and ``stats.output_truncated`` is set.
    - ``raw_output_bytes``: kept of the child's raw fd 1 and fd 2, each.
    - ``value_bytes``: largest encoded return value, argument set or result.
    - ``frame_bytes``: frame ceiling on fd 3.
    - ``variables_bytes``: of a run given ``variables``, the encoded
      variables it starts with, and those it ends with (with the names left
      out); past it, names are left out and listed in
      ``RunResult.dropped_variables``. At most 4 MiB.
    - ``checkpoint_bytes``: of a suspendable run, its call log (its calls'
      and their answers' bytes on the wire) and its checkpoint; past it the
      log is let go of and the run can no longer be suspended (a Suspend
      fails its call with a BindingError of type ``Suspend``). Also the
      largest checkpoint ``Runtime.resume`` reads under these limits.

    Shape:

    - ``max_depth``: nesting of values.
    - ``max_calls_in_flight``: concurrent binding calls; the guest queues more.

    Resources (None: not limited; else a whole number up to MAX_RESOURCE),
    applied to the guest with rlimits, soft and hard alike (never above the
    host process's own hard limit), and, where cgroups are writable, a
    cgroup for the run's whole process tree:

    - ``memory_bytes``: address space (Python), V8 heap and RLIMIT_DATA (Node),
      and the cgroup's memory ceiling.
    - ``cpu_seconds``: RLIMIT_CPU (None: ``timeout`` + 1), at most
      MAX_CPU_SECONDS.
    - ``open_files``: RLIMIT_NOFILE.
    - ``file_bytes``: RLIMIT_FSIZE, the largest file written.
    - ``processes``: processes and threads of the run (the cgroup's pids.max;
      without writable cgroups nothing bounds them: RLIMIT_NPROC counts all of
      the user's processes and root ignores it).
    - ``disk_bytes``: under ``namespaces``, each place the program can write
      (its work directory, ``/tmp``, ``/dev/shm``) is a private tmpfs of at
      most this size, gone with the run; its pages are memory, so the memory
      cgroup also counts them toward ``memory_bytes``. The ``process`` profile
      writes to the host's disk: only ``file_bytes`` bounds it, per file.
    """

    timeout: float = 30.0
    call_timeout: float | None = None
    kill_grace: float = 0.5
    output_bytes: int = 1 * MiB
    raw_output_bytes: int = 64 * 1024
    value_bytes: int = DEFAULT_VALUE_BYTES
    frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    max_depth: int = DEFAULT_MAX_DEPTH
    max_calls_in_flight: int = 64
    memory_bytes: int | None = 2048 * MiB
    cpu_seconds: int | None = None
    open_files: int | None = 256
    file_bytes: int | None = 64 * MiB
    processes: int | None = 256
    disk_bytes: int | None = 256 * MiB
    variables_bytes: int = 4 * MiB
    approval_timeout: float = 3600.0
    approval_pause: float = 3600.0
    checkpoint_bytes: int = 32 * MiB

    def __post_init__(self) -> None:
        for name in ("timeout", "kill_grace", "approval_timeout", "call_timeout"):
            value = getattr(self, name)
            if value is None and name == "call_timeout":
                continue
            if not (isinstance(value, (int, float)) and 0 < value <= sys.float_info.max):
                raise ValueError(f"Limits.{name} must be a positive, finite number of seconds"
                                 + (" or None" if name == "call_timeout" else ""))
        if not (isinstance(self.approval_pause, (int, float))
                and 0 <= self.approval_pause <= sys.float_info.max):
            raise ValueError("Limits.approval_pause must be a finite number of seconds, "
                             "0 or more")
        for name in _RESOURCES:
            value = getattr(self, name)
            most = MAX_CPU_SECONDS if name == "cpu_seconds" else MAX_RESOURCE
            if value is not None and not (isinstance(value, int) and not isinstance(value, bool)
                                          and 0 <= value <= most):
                raise ValueError(f"Limits.{name} must be an int in [0, {most}] or None "
                                 "(not limited)")
        if self.output_bytes < 0 or self.raw_output_bytes < 0:
            raise ValueError("output limits must not be negative")
        if self.disk_bytes is not None and not self.disk_bytes > 0:
            raise ValueError("Limits.disk_bytes must be positive or None")
        if not (isinstance(self.checkpoint_bytes, int) and self.checkpoint_bytes > 0):
            raise ValueError("Limits.checkpoint_bytes must be a positive int")
        if not 0 <= self.variables_bytes <= MAX_VARIABLES_BYTES:
            raise ValueError(f"Limits.variables_bytes must be in [0, {MAX_VARIABLES_BYTES}]")
        problem = self.wire().problem()
        if problem:
            raise ValueError(f"Limits: {problem}")

    def wire(self, *, variables: bool = False) -> RunLimits:
        """The limits RUN carries to the guest, and that the host applies to
        it; ``variables``: the run is given variables, so RUN carries
        ``variables_bytes`` too (spec §7.9)."""
        cpu = self.cpu_seconds
        if cpu is None:
            cpu = min(math.ceil(self.timeout) + 1, MAX_CPU_SECONDS)
        return RunLimits(
            output_bytes=self.output_bytes,
            value_bytes=self.value_bytes,
            frame_bytes=self.frame_bytes,
            max_depth=self.max_depth,
            max_calls_in_flight=self.max_calls_in_flight,
            memory_bytes=self.memory_bytes,
            cpu_seconds=cpu,
            open_files=self.open_files,
            file_bytes=self.file_bytes,
            processes=self.processes,
            variables_bytes=self.variables_bytes if variables else None,
        )
