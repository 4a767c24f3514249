"""Suspending a run and resuming it in a fresh guest, by replaying its calls.

A run made with ``suspendable=True`` logs every binding call with its
answer. When a binding raises :class:`Suspend` (or an approval hook
answers with one), the run ends with status ``suspended`` and a
``checkpoint``: CBOR bytes holding the source, language, bindings' names
and declarations, limits, variables and the call log. ``Runtime.resume``
runs the program again from the start in a new guest and answers its calls
from the log, in order, without calling any binding; the call that
suspended gets the value given to ``resume``, and from there the run is
live. A program that calls anything else than the log says (another
binding, other arguments) ends with status ``error`` and a
``ResumeDiverged`` error, and nothing is executed for it.

The contract: the program must be deterministic up to the suspension point
(given the same answers, it makes the same calls). Output printed before
that point is not shown again (the suspended run's result had it): the
resumed run's output starts where the suspended one stopped. The cost is
the program's own work up to that point, done again; the calls cost a
lookup each.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import cbor2

from tether.codec import Call, CallError, ErrorCode, Result

from .events import Observer
from .limits import Limits

FORMAT = 1


class Suspend(Exception):
    """Raised by a binding (or returned by an approval hook) to end the run
    with status ``suspended`` and a checkpoint to resume from later; the
    ``reason`` is the result's ``error.message``."""

    def __init__(self, reason: str = "the run was suspended") -> None:
        super().__init__(reason)
        self.reason = reason


class CheckpointError(ValueError):
    """The bytes are not a checkpoint of this version of tether, or the
    bindings given to resume are not those of the checkpoint."""


@dataclass(slots=True)
class LoggedCall:
    """One call of the log: what the program asked, and how it was answered."""

    name: str
    args: list[Any]
    kwargs: dict[str, Any]
    value: Any = None
    error: dict[str, Any] | None = None  # {"code", "type", "message"}
    answered: bool = False


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """What a suspended run needs to go on: see the module's docstring."""

    source: str
    language: str
    bindings: list[dict[str, Any]]  # name, signature, doc
    limits: dict[str, Any]
    variables: dict[str, Any] | None
    last_expression: bool
    calls: list[LoggedCall]  # the last one is the call that suspended
    reason: str = ""

    def encode(self) -> bytes:
        return cbor2.dumps({
            "tether_checkpoint": FORMAT,
            "source": self.source,
            "language": self.language,
            "bindings": self.bindings,
            "limits": self.limits,
            "variables": self.variables,
            "last_expression": self.last_expression,
            "calls": [dataclasses.asdict(c) for c in self.calls],
            "reason": self.reason,
        })

    @classmethod
    def decode(cls, data: bytes) -> Checkpoint:
        if not isinstance(data, bytes | bytearray):
            raise TypeError("checkpoint must be bytes")
        try:
            raw = cbor2.loads(data)
            if not isinstance(raw, dict) or raw.get("tether_checkpoint") != FORMAT:
                raise CheckpointError("not a tether checkpoint (or of another format)")
            return cls(
                source=raw["source"], language=raw["language"], bindings=raw["bindings"],
                limits=raw["limits"], variables=raw["variables"],
                last_expression=raw["last_expression"],
                calls=[LoggedCall(**c) for c in raw["calls"]], reason=raw["reason"])
        except CheckpointError:
            raise
        except Exception as exc:
            raise CheckpointError(f"not a valid checkpoint: {exc}") from None

    def limits_value(self) -> Limits:
        return Limits(**self.limits)


class CallLog(Observer):
    """Every call of a suspendable run, in the order the program made them."""

    def __init__(self, replayed: list[LoggedCall] | None = None) -> None:
        self.calls: list[LoggedCall] = list(replayed or [])
        self._by_id: dict[int, LoggedCall] = {}

    def call_started(self, call: Call) -> None:
        entry = LoggedCall(call.name, list(call.args), dict(call.kwargs))
        self.calls.append(entry)
        self._by_id[call.id] = entry

    def call_ended(self, call: Call, result: Result) -> None:
        entry = self._by_id.pop(call.id, None)
        if entry is None:
            return
        entry.answered = True
        if result.error is None:
            entry.value = result.value
        else:
            entry.error = result.error.to_wire()

    def suspended_at(self, call: Call) -> list[LoggedCall]:
        """The log for a checkpoint: the answered calls, then ``call``.
        Calls still in flight are left out (on resume they run live)."""
        entry = self._by_id.get(call.id)
        answered = [c for c in self.calls if c.answered]
        return [*answered, entry or LoggedCall(call.name, list(call.args), dict(call.kwargs))]


@dataclass(slots=True)
class Replay:
    """Answers a resumed run's calls from a checkpoint's log."""

    calls: list[LoggedCall]
    value: Any  # the suspended call's answer
    position: int = 0
    log: CallLog = field(default_factory=CallLog)

    @property
    def replaying(self) -> bool:
        """Whether the run is still before the suspension point."""
        return self.position < len(self.calls)

    def answer(self, call: Call) -> Result | str:
        """The logged answer to ``call``, or why the program diverged."""
        expected = self.calls[self.position]
        if (call.name, list(call.args), dict(call.kwargs)) != \
                (expected.name, expected.args, expected.kwargs):
            return (f"call {self.position + 1} of the log was {expected.name}() with "
                    f"{_shown(expected.args, expected.kwargs)}; the program called "
                    f"{call.name}() with {_shown(call.args, call.kwargs)}")
        self.position += 1
        self.log.calls.append(expected)
        if self.position == len(self.calls):  # the call that suspended
            answered = LoggedCall(expected.name, expected.args, expected.kwargs,
                                  value=self.value, answered=True)
            self.log.calls[-1] = answered
            return Result(id=call.id, value=self.value)
        if expected.error is not None:
            error = expected.error
            return Result(id=call.id, error=CallError(
                ErrorCode(error["code"]), error["type"], error["message"]))
        return Result(id=call.id, value=expected.value)


def _shown(args: list[Any], kwargs: dict[str, Any]) -> str:
    text = repr({"args": list(args), "kwargs": dict(kwargs)})
    return text if len(text) <= 200 else text[:197] + "..."
