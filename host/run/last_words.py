"""After CANCEL (a timeout, a cancellation), the host reads on for the DONE
in which the guest says where the program was (R-CANCEL-4), while the guest
is terminated: nothing it sends delays the kill, and of that DONE only its
traceback and line reach the result."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses

from tether.codec import CONNECTION_CLOSED, Call, CallError, Done, Error, ErrorCode, Event, Result

from ..aio.reader import Reader
from .endings import Ending


class LastWords:
    def __init__(self, grace: float) -> None:
        """``grace``: how long the socket's last bytes are given to be read."""
        self._grace = grace
        self._reader: Reader | None = None
        self.listening = False
        self.where: Done | None = None
        #: Done once the guest has said all it will (its DONE, an ERROR, the
        #: end of the stream or a broken frame): the kill need not wait on.
        self.said: asyncio.Future[None] | None = None

    def listen(self, reader: Reader) -> None:
        """Read on, for the guest's DONE only."""
        self._reader = reader
        self.listening = True
        self.said = asyncio.get_running_loop().create_future()
        reader.process()  # frames received and not yet looked at
        if self.listening:
            reader.resume()

    async def collect(self) -> None:
        """What the dead guest left in the socket; then the channel closes."""
        assert self._reader is not None
        if self.listening:
            self._reader.channel.read_available()
            if not self._reader.quiet:  # else no turn of a busy loop is spent on it
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._reader.settled(), self._grace)
        self.listening = False
        self._reader.channel.close()

    def heard(self, event: Event | None) -> None:
        """A frame after CANCEL (None: a broken one): a DONE is kept, a CALL
        refused (R-STATE-3), everything else ignored here (the run's end is
        decided; the session keeps OUTPUT)."""
        assert self._reader is not None
        if isinstance(event, Done):
            self.where = event
        elif isinstance(event, Call):
            self._reader.send(Result(id=event.id, error=CallError(
                ErrorCode.CANCELLED, "Cancelled", "the run is ending")))
        if event is None or isinstance(event, Done | Error) or event is CONNECTION_CLOSED:
            self.listening = False
            self._reader.channel.pause_reading()
            if self.said is not None and not self.said.done():
                self.said.set_result(None)

    def locate(self, ending: Ending) -> Ending:
        """``ending`` with the traceback and line of the guest's DONE; its
        status, type and message stay the host's."""
        where = None if self.where is None else self.where.error
        if where is None or ending.error is None:
            return ending
        return dataclasses.replace(ending, error=dataclasses.replace(
            ending.error, traceback=where.traceback, line=where.line))
