"""What one run is asked to do: the program, its language, its bindings,
its limits and the variables it starts with; the RUN that carries it to
the guest, and the checkpoint that saves it when the run is suspended."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tether.codec import Run, RunLimits

from ..bindings.prepared import HostBinding
from ..limits import Limits
from .checkpoints import Checkpoint, CheckpointKeys, LoggedCall, seal


@dataclass(frozen=True, slots=True)
class RunRequest:
    """``variables`` are wire values (spec §7.9); ``last_expression``: a
    final expression statement returns its value; ``checkpoint_keys``
    seal its checkpoint, if it is suspended (None: the process's key)."""

    source: str
    language: str
    bindings: Mapping[str, HostBinding]
    limits: Limits
    variables: dict[str, Any] | None = None
    last_expression: bool = False
    checkpoint_keys: CheckpointKeys | None = None

    def wire_limits(self) -> RunLimits:
        """The limits RUN carries, which are also those applied to the guest."""
        return _wire_limits(self.limits, self.variables is not None)

    def run_message(self, limits: RunLimits) -> Run:
        return Run(source=self.source, language=self.language,
                   bindings=tuple(b.wire for b in self.bindings.values()), limits=limits,
                   variables=self.variables, last_expression=self.last_expression)

    async def checkpoint(self, calls: list[LoggedCall], reason: str) -> bytes:
        """This run, suspended after ``calls``, sealed for ``Runtime.resume``
        (CheckpointError past ``Limits.checkpoint_bytes``)."""
        return await seal(Checkpoint(
            source=self.source, language=self.language,
            bindings=[b.wire.name for b in self.bindings.values()],
            variables=self.variables, last_expression=self.last_expression, calls=calls,
            reason=reason), self.checkpoint_keys or CheckpointKeys(None),
            self.limits.checkpoint_bytes)


@functools.lru_cache(maxsize=64)
def _wire_limits(limits: Limits, variables: bool) -> RunLimits:
    """Runs mostly share their limits (frozen, like what they become)."""
    return limits.wire(variables=variables)
