"""Suspending a run and resuming it in a fresh guest, by replaying its calls.

A run made with ``suspendable=True`` logs every binding call with its
answer. When a binding raises :class:`Suspend` (or an approval hook
answers with one), the run ends with status ``suspended`` and a
``checkpoint``: CBOR bytes holding the source, language, bindings' names
and declarations, limits, variables and the call log. ``Runtime.resume``
runs the program again from the start in a new guest and answers its calls
from the log, in order, without calling any binding; the call that
suspended gets the value given to ``resume``, and once the program has made
every call of the log the run is live. Calls that were still in flight when
the run suspended are in the log, unanswered: on resume they run live (their
binding is called), in their place. A program that calls anything else than
the log says (another binding, other arguments), or ends before it has made
every call of the log, ends with status ``error`` and a ``ResumeDiverged``
error, and nothing is executed for the call that differed.

The contract: the program must be deterministic up to the suspension point
(given the same answers, it makes the same calls). Output printed before
that point is not shown again (the suspended run's result had it): the
resumed run's output starts where the suspended one stopped. The cost is
the program's own work up to that point, done again; the calls cost a
lookup each. A resumed run that ends before that point (it diverged, failed
or met a limit) is no continuation: its result has all it printed.

Format 2 added the in-flight calls and ``suspended``, the mark of the call
that suspended; format 1 (answered calls, then the call that suspended) is
still read.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import cbor2

from tether.codec import Call, CallError, ErrorCode, Result

from .events import Observer
from .limits import Limits

#: The checkpoint format written; ``Checkpoint.decode`` reads these.
FORMAT = 2
READABLE = (1, 2)


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
    answered: bool = False  # else in flight when the run suspended: runs live on resume
    suspended: bool = False  # the call that suspended the run


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """What a suspended run needs to go on: see the module's docstring."""

    source: str
    language: str
    bindings: list[dict[str, Any]]  # name, signature, doc
    limits: dict[str, Any]
    variables: dict[str, Any] | None
    last_expression: bool
    calls: list[LoggedCall]  # in call order; one of them is the call that suspended
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
            if not isinstance(raw, dict) or "tether_checkpoint" not in raw:
                raise CheckpointError("not a tether checkpoint")
            version = raw["tether_checkpoint"]
            if version not in READABLE:
                raise CheckpointError(
                    f"a tether checkpoint of format {version!r}; this version of tether "
                    f"reads formats {', '.join(map(str, READABLE))}")
            calls = [LoggedCall(**c) for c in raw["calls"]]
            if version == 1 and calls:  # the call that suspended was the last
                calls[-1].suspended = True
            suspending = sum(c.suspended for c in calls)
            if suspending != 1:
                raise CheckpointError("not a valid checkpoint: it marks "
                                      f"{suspending} suspending calls")
            return cls(
                source=raw["source"], language=raw["language"], bindings=raw["bindings"],
                limits=raw["limits"], variables=raw["variables"],
                last_expression=raw["last_expression"], calls=calls, reason=raw["reason"])
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
        if call.id in self._by_id:  # logged in its place by a replay already
            return
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
        """The log for a checkpoint, in call order, ``call`` marked as the
        one that suspended. The calls still in flight stay unanswered (on
        resume they run live)."""
        entry = self._by_id.get(call.id)
        marked = LoggedCall(call.name, list(call.args), dict(call.kwargs), suspended=True)
        calls = [dataclasses.replace(c, suspended=True) if c is entry else c
                 for c in self.calls]
        return calls if entry is not None else [*calls, marked]


@dataclass(slots=True)
class Replay:
    """Answers a resumed run's calls from a checkpoint's log."""

    calls: list[LoggedCall]
    value: Any  # the suspended call's answer: a wire value, or the CallError it raises
    position: int = 0
    log: CallLog = field(default_factory=CallLog)

    @property
    def replaying(self) -> bool:
        """Whether the run is still before the suspension point: some call
        of the log is still to be made."""
        return self.position < len(self.calls)

    def answer(self, call: Call) -> Result | str | None:
        """The logged answer to ``call``, None when it is to run live (it
        was in flight when the run suspended; it is logged here, in its
        place), or why the program diverged."""
        expected = self.calls[self.position]
        if (call.name, list(call.args), dict(call.kwargs)) != \
                (expected.name, expected.args, expected.kwargs):
            return (f"call {self.position + 1} of the log was {expected.name}() with "
                    f"{_shown(expected.args, expected.kwargs)}; the program called "
                    f"{call.name}() with {_shown(call.args, call.kwargs)}")
        self.position += 1
        if expected.suspended:
            if isinstance(self.value, CallError):
                self.log.calls.append(LoggedCall(expected.name, expected.args, expected.kwargs,
                                                 error=self.value.to_wire(), answered=True))
                return Result(id=call.id, error=self.value)
            self.log.calls.append(LoggedCall(expected.name, expected.args, expected.kwargs,
                                             value=self.value, answered=True))
            return Result(id=call.id, value=self.value)
        if not expected.answered:
            self.log.call_started(call)
            return None
        self.log.calls.append(expected)
        if expected.error is not None:
            error = expected.error
            return Result(id=call.id, error=CallError(
                ErrorCode(error["code"]), error["type"], error["message"]))
        return Result(id=call.id, value=expected.value)

    def ended_early(self, how: str) -> str:
        """Why a program that ended (``how``: "returned", "failed (...)")
        before making every call of the log diverged."""
        expected = self.calls[self.position]
        return (f"the program {how} after {self.position} of {len(self.calls)} logged "
                f"calls; call {self.position + 1} of the log was {expected.name}() with "
                f"{_shown(expected.args, expected.kwargs)}")


def _shown(args: list[Any], kwargs: dict[str, Any]) -> str:
    text = repr({"args": list(args), "kwargs": dict(kwargs)})
    return text if len(text) <= 200 else text[:197] + "..."
