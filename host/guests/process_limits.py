"""What the host bounds a local guest process by from outside, as one value:
its rlimits (inherited by everything it starts) and its cgroup's ceilings.
:meth:`GuestProcess.apply_limits <tether.host.guests.launch.GuestProcess.apply_limits>`
is where they are applied, a run's (:meth:`ProcessLimits.of_run`) and the
checker's (host/check/processes.py) alike."""

from __future__ import annotations

from dataclasses import dataclass

from tether.codec import RunLimits


@dataclass(frozen=True)
class ProcessLimits:
    """``memory_bytes`` bounds the cgroup's memory and the address space
    (RLIMIT_AS) where ``address_space``, else what the process allocates
    (RLIMIT_DATA: Node and the checkers reserve far more address space than
    they use). ``processes`` bounds the cgroup alone: RLIMIT_NPROC counts
    every process of the user, and root ignores it."""

    memory_bytes: int | None = None
    address_space: bool = False
    cpu_seconds: int | None = None
    open_files: int | None = None
    file_bytes: int | None = None
    processes: int | None = None

    @classmethod
    def of_run(cls, language: str, wire: RunLimits) -> ProcessLimits:
        """A run's, from the limits its RUN carries."""
        return cls(memory_bytes=wire.memory_bytes, address_space=language == "python",
                   cpu_seconds=wire.cpu_seconds, open_files=wire.open_files,
                   file_bytes=wire.file_bytes, processes=wire.processes)
