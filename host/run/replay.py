"""Suspending a run and resuming it in a fresh guest, by replaying its calls.

A run made with ``suspendable=True`` logs every binding call with its
answer. When a binding raises :class:`~.checkpoints.Suspend` (or an
approval hook answers with one), the run ends with status ``suspended``
and a ``checkpoint`` (host/run/checkpoints.py) holding the source, language,
bindings' names, variables and the call log. ``Runtime.resume`` runs the
program again from the start in a new guest and answers its calls from the
log, in order, without calling any binding; the call that suspended gets
the value given to ``resume``, and once the program has made every call of
the log the run is live. Calls that were still in flight when the run
suspended are in the log, unanswered: on resume they run live (their
binding is called), in their place. A program that calls anything else
than the log says (another binding, other arguments), or ends before it
has made every call of the log, ends with status ``error`` and a
``ResumeDiverged`` error, and nothing is executed for the call that
differed.

The contract: the program must be deterministic up to the suspension point
(given the same answers, it makes the same calls). Output printed before
that point is not shown again (the suspended run's result had it): the
resumed run's output starts where the suspended one stopped. The cost is
the program's own work up to that point, done again; the calls cost a
lookup each. A resumed run that ends before that point (it diverged, failed
or met a limit) is no continuation: its result has all it printed.

The log holds what the program sent and what it was answered, so it is
bounded: past ``Limits.checkpoint_bytes`` (its calls' and answers' bytes on
the wire) it lets go of everything and the run can no longer be suspended.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from tether.codec import Call, CallError, Result

from .checkpoints import LoggedCall
from .events import Observer


class CallLog(Observer):
    """Every call of a suspendable run, in the order the program made them,
    while they take at most ``max_bytes`` (``used`` already: a resumed
    run's log starts with its checkpoint's size)."""

    def __init__(self, max_bytes: int, replayed: list[LoggedCall] | None = None, *,
                 used: int = 0) -> None:
        self.calls: list[LoggedCall] = list(replayed or [])
        self._by_id: dict[int, LoggedCall] = {}
        self.max_bytes = max_bytes
        self.used = used
        #: The log passed ``max_bytes`` and holds nothing: no checkpoint can be made.
        self.full = used > max_bytes

    def _add(self, size: int) -> bool:
        """Count ``size`` more bytes; False once the log is full (then empty)."""
        self.used += size
        if not self.full and self.used > self.max_bytes:
            self.full = True
            self.calls.clear()
            self._by_id.clear()
        return not self.full

    def replayed(self, entry: LoggedCall) -> None:
        """A call answered from the checkpoint's log (counted in its size)."""
        if not self.full:
            self.calls.append(entry)

    def call_started(self, call: Call, size: int) -> None:
        if call.id in self._by_id or not self._add(size):  # logged by a replay already
            return
        entry = LoggedCall(call.name, list(call.args), dict(call.kwargs))
        self.calls.append(entry)
        self._by_id[call.id] = entry

    def call_ended(self, call: Call, result: Result, size: int) -> None:
        entry = self._by_id.pop(call.id, None)
        if entry is None or not self._add(size):
            return
        entry.answered = True
        if result.error is None:
            entry.value = result.value
        else:
            entry.error = result.error

    def suspended_at(self, call: Call) -> list[LoggedCall]:
        """The log for a checkpoint, in call order, ``call`` marked as the
        one that suspended: a copy, as the log is now. The calls still in
        flight stay unanswered (on resume they run live)."""
        entry = self._by_id.get(call.id)
        marked = LoggedCall(call.name, list(call.args), dict(call.kwargs), suspended=True)
        calls = [dataclasses.replace(c, suspended=True) if c is entry else dataclasses.replace(c)
                 for c in self.calls]
        return calls if entry is not None else [*calls, marked]


@dataclass(slots=True)
class Replay:
    """Answers a resumed run's calls from a checkpoint's log."""

    calls: list[LoggedCall]
    value: Any  # the suspended call's answer: a wire value, or the CallError it raises
    log: CallLog
    position: int = 0

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
                self.log.replayed(LoggedCall(expected.name, expected.args, expected.kwargs,
                                             error=self.value, answered=True))
                return Result(id=call.id, error=self.value)
            self.log.replayed(LoggedCall(expected.name, expected.args, expected.kwargs,
                                         value=self.value, answered=True))
            return Result(id=call.id, value=self.value)
        if not expected.answered:
            self.log.call_started(call, 0)  # counted in the checkpoint's size
            return None
        self.log.replayed(expected)
        if expected.error is not None:
            return Result(id=call.id, error=expected.error)
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
