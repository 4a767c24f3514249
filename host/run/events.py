"""What happens during a run, as it happens: typed events and their delivery.

A session tells an :class:`Observer` about each printed chunk, each
binding call and the bytes on the guest's channel; :class:`Emitter` turns
the first two into the frozen events below for an ``on_event`` callback,
and :class:`EventBuffer` holds them for ``Runtime.stream()`` between the
run and a consumer that may lag.

Printed text is delivered live up to ``Limits.output_bytes`` in total; past
it no more :class:`Printed` events come (the result still keeps the head
and the tail of the output). A stream's buffer holds a bounded number of
events and a bounded number of bytes of what they carry (printed text,
arguments, values: as encoded on the wire, the ``size`` of a call's
events): when the consumer lags that far behind, newer events are dropped,
never the run slowed, and one :class:`EventsDropped` says how many when
there is room again. The final :class:`RunResult` is always delivered.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tether.codec import Call, Result

from ..result import RunError

logger = logging.getLogger("tether")


@dataclass(frozen=True, slots=True)
class Printed:
    """Text the program printed: ``stream`` is ``"stdout"`` or ``"stderr"``."""

    stream: str  #: ``"stdout"`` or ``"stderr"``
    text: str  #: what was printed


@dataclass(frozen=True, slots=True)
class CallStarted:
    """A binding call reached its binding: ``id`` is the call's id in the
    run, ``args`` and ``kwargs`` what the program passed (before any
    approval's edit), ``size`` the bytes they took on the wire."""

    id: int  #: the call's id, unique in the run
    name: str  #: the binding's name in the program
    args: list[Any]  #: positional arguments as passed
    kwargs: dict[str, Any]  #: keyword arguments as passed
    size: int = 0  #: bytes of the call as it crossed the wire (its CALL's payload)


@dataclass(frozen=True, slots=True)
class CallEnded:
    """A binding call was answered: ``value`` (in the value model) or
    ``error`` (what the program's ``BindingError`` carries), the seconds
    from :class:`CallStarted` to the answer, and ``size``, the bytes the
    answer took on the wire."""

    id: int  #: the call's id, as in its CallStarted
    name: str  #: the binding's name in the program
    value: Any  #: what the call returned (None with an error)
    error: RunError | None  #: why it failed: ``type`` and ``message``
    duration: float  #: seconds from CallStarted to the answer
    size: int = 0  #: bytes of the answer as it crossed the wire (its RESULT's payload)


@dataclass(frozen=True, slots=True)
class EventsDropped:
    """``count`` events were dropped here because the consumer lagged."""

    count: int  #: how many events were dropped


#: What ``on_event`` receives and ``Runtime.stream()`` yields before the result.
RunEvent = Printed | CallStarted | CallEnded | EventsDropped


class Observer:
    """What a session reports while it runs; every method does nothing."""

    def output(self, stream: str, text: str) -> None:
        """The program printed ``text``."""

    def call_started(self, call: Call, size: int) -> None:
        """``call`` is handed to its binding; ``size``: its CALL's payload bytes."""

    def call_ended(self, call: Call, result: Result, size: int) -> None:
        """``result`` answers ``call``; ``size``: its RESULT's payload bytes."""

    def wire(self, direction: str, data: bytes) -> None:
        """``data`` crossed the guest's channel, ``"in"`` (from the guest)
        or ``"out"``, in the order the bytes crossed (the conformance runner
        splits them into frames)."""


class Observers(Observer):
    """Several observers, told in order."""

    def __init__(self, *observers: Observer) -> None:
        self._observers = observers

    def output(self, stream: str, text: str) -> None:
        for observer in self._observers:
            observer.output(stream, text)

    def call_started(self, call: Call, size: int) -> None:
        for observer in self._observers:
            observer.call_started(call, size)

    def call_ended(self, call: Call, result: Result, size: int) -> None:
        for observer in self._observers:
            observer.call_ended(call, result, size)

    def wire(self, direction: str, data: bytes) -> None:
        for observer in self._observers:
            observer.wire(direction, data)


def combine(*observers: Observer | None) -> Observer | None:
    """One observer for those given (None when none is)."""
    present = [o for o in observers if o is not None]
    if not present:
        return None
    return present[0] if len(present) == 1 else Observers(*present)


class Emitter(Observer):
    """Hands each happening to ``on_event`` as a :data:`RunEvent`. The
    callback runs on the event loop and must not block; what it raises is
    logged and otherwise ignored (the run goes on)."""

    def __init__(self, on_event: Callable[[RunEvent], object], output_bytes: int) -> None:
        self._on_event = on_event
        self._output_left = output_bytes
        self._started: dict[int, float] = {}

    def _emit(self, event: RunEvent) -> None:
        try:
            self._on_event(event)
        except Exception:
            logger.exception("tether: an on_event callback failed")

    def output(self, stream: str, text: str) -> None:
        if self._output_left <= 0:
            return
        size = len(text.encode())
        if size > self._output_left:  # the cut stays on a character boundary
            text = text.encode()[:self._output_left].decode(errors="ignore")
        self._output_left -= size
        if text:
            self._emit(Printed(stream, text))

    def call_started(self, call: Call, size: int) -> None:
        self._started[call.id] = time.monotonic()
        self._emit(CallStarted(call.id, call.name, list(call.args), dict(call.kwargs), size))

    def call_ended(self, call: Call, result: Result, size: int) -> None:
        started = self._started.pop(call.id, None)
        duration = 0.0 if started is None else time.monotonic() - started
        error = None if result.error is None else RunError(result.error.type,
                                                           result.error.message)
        self._emit(CallEnded(call.id, call.name, result.value, error, duration, size))


def event_bytes(event: RunEvent) -> int:
    """What an event carries, in bytes: printed text as UTF-8, a call's
    arguments or answer as encoded on the wire."""
    if isinstance(event, Printed):
        return len(event.text.encode(errors="surrogatepass"))
    if isinstance(event, CallStarted | CallEnded):
        return event.size
    return 0


class EventBuffer:
    """At most ``size`` events, carrying at most ``max_bytes`` between them
    (:func:`event_bytes`), waiting for a consumer (see the module's
    policy); :meth:`put` never waits. An event larger than ``max_bytes``
    on its own is always dropped."""

    def __init__(self, size: int, max_bytes: int) -> None:
        if not isinstance(size, int) or size < 1:
            raise ValueError("buffer must be a positive int")
        if not isinstance(max_bytes, int) or max_bytes < 1:
            raise ValueError("buffer_bytes must be a positive int")
        self._size = size
        self._max_bytes = max_bytes
        self._events: deque[RunEvent] = deque()
        self._bytes = 0  # what the waiting events carry
        self._dropped = 0
        self._ready = asyncio.Event()

    def put(self, event: RunEvent) -> None:
        if self._dropped and len(self._events) < self._size:
            self._events.append(EventsDropped(self._dropped))
            self._dropped = 0
        size = event_bytes(event)
        if len(self._events) < self._size and self._bytes + size <= self._max_bytes:
            self._events.append(event)
            self._bytes += size
            self._ready.set()
        else:
            self._dropped += 1

    async def events(self, run: asyncio.Future[Any]) -> list[RunEvent]:
        """What is waiting, once there is something or ``run`` is done
        (then possibly nothing)."""
        while not self._events and not run.done():
            self._ready.clear()
            waiter: asyncio.Future[Any] = asyncio.ensure_future(self._ready.wait())
            try:
                await asyncio.wait({waiter, run}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
        taken = list(self._events)
        self._events.clear()
        self._bytes = 0
        if self._dropped and run.done():
            taken.append(EventsDropped(self._dropped))
            self._dropped = 0
        return taken
