"""Reading a guest's frames without letting one run hold the event loop.

Decoding is the one piece of the host's work whose cost the guest chooses,
and every run shares the loop, so it is bounded three ways:

- a payload may hold only so many data items (R-CBOR-11), counted before
  anything is built;
- a frame whose payload is larger than ``APART_BYTES`` is decoded in
  tether's decoding thread, in steps of ``STEP_BYTES``: the C decoder holds
  the interpreter for as long as a call lasts, so no call is given more
  than one step, and the thread waits for a turn of the loop between
  steps (the connection's ``between_steps``), so the loop never waits
  long for it;
- smaller frames are taken on the loop, at most ``TURN_BYTES`` of them per
  turn of the loop, however many reads bring them (headers and discarded
  extension frames count too); reading is paused until the next turn, so a
  guest that floods blocks on its own full socket.

While a frame is decoded in the thread, the connection belongs to that
thread: :meth:`Reader.send` holds the owner's messages until it is back.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import socket
import threading
import time
from collections.abc import Callable
from typing import Final, TypeVar

from tether.codec import (
    NEED_DATA,
    Connection,
    Event,
    Message,
    NeedData,
    Payload,
    ProtocolError,
    payload_pieces,
)

from . import threads
from .channel import Channel

_T = TypeVar("_T")

#: Larger payloads are decoded in the decoding thread...
APART_BYTES: Final = 32 * 1024
#: ...in steps of at most this many bytes (the connection's ``step_bytes``).
STEP_BYTES: Final = 4 * 1024
#: Bytes of frames taken on the loop in one turn.
TURN_BYTES: Final = 64 * 1024

#: One decoding thread for every run: big frames wait for each other, and
#: the loop competes with one thread at most.
decoding = threads.WorkerThreads(1, "tether-decode")


#: A step waits at most this long for the loop to take its turn (a loop
#: that is itself waiting for the thread must not stall it).
TURN_WAIT: Final = 0.05

_paced = threading.local()  # .loop: the loop the thread's current work is for


def paced(threads: concurrent.futures.Executor, work: Callable[[], _T]) -> asyncio.Future[_T]:
    """``work`` in one of ``threads``, for the running loop: between its
    steps (:func:`between_steps`) the thread waits for the loop to take a turn."""
    loop = asyncio.get_running_loop()

    def run() -> _T:
        _paced.loop = loop
        try:
            return work()
        finally:
            _paced.loop = None

    return loop.run_in_executor(threads, run)


def between_steps() -> None:
    """Hand the interpreter over between decoding steps. In :func:`paced`
    work, one step per turn of the loop: the thread waits until the loop
    has run what was ready, so the other runs go first however many large
    frames arrive. (A thread that only let go of the interpreter would
    take it back at each of the loop's system calls, which each release
    it, and the loop would wait for it each time.) Elsewhere ``sleep(0)``
    lets go of it."""
    loop: asyncio.AbstractEventLoop | None = getattr(_paced, "loop", None)
    if loop is None:
        time.sleep(0)
        return
    turned = threading.Event()
    try:
        loop.call_soon_threadsafe(turned.set)
    except RuntimeError:  # the loop is closed
        return
    turned.wait(TURN_WAIT)


class Reader:
    """Feeds ``conn`` from the guest's end of fd 3, ``sock``, and hands each
    event to ``on_event``; a protocol violation or an error of ours goes to
    ``on_error``. Stops for good once ``finished()`` is true. ``tap`` sees
    the channel's bytes (:class:`~.channel.Channel`), which starts reading
    at its ``resume_reading()``."""

    def __init__(
        self,
        conn: Connection,
        sock: socket.socket,
        *,
        on_event: Callable[[Event], None],
        on_error: Callable[[Exception], None],
        finished: Callable[[], bool],
        tap: Callable[[str, bytes], None] | None = None,
    ) -> None:
        self._conn = conn
        self.channel = self._channel = Channel(sock, self.feed, self.eof, tap, reading=False)
        self._on_event = on_event
        self._on_error = on_error
        self._finished = finished
        self._held: list[tuple[Message, Payload | None]] = []
        self._loop = asyncio.get_running_loop()
        self.busy = False  # a frame is being decoded in the decoding thread
        self._later = False  # the rest of the backlog waits for the next turn
        self._budget = TURN_BYTES  # bytes of frames this turn may still take
        self._fed = 0  # bytes received
        self._charged = 0  # bytes of them taken off the stream and charged
        self._quiet = asyncio.Event()  # nothing buffered is left to process
        self._quiet.set()

    def send(self, message: Message, payload: Payload | None = None) -> None:
        """Send ``message`` (``payload``: its encoded envelope, when known),
        once the connection is back from the decoding thread; one the
        connection refuses (a RESULT racing the end of the run) says nothing."""
        if self.busy:
            self._held.append((message, payload))
            return
        try:
            header, payload = self._conn.send_parts(message, payload)
        except ProtocolError:
            return
        self._channel.write(header, *payload_pieces(payload))

    def feed(self, data: bytes) -> None:
        if self.busy:
            # The decoding thread owns the connection: no more until it is back.
            self._channel.pause_reading()
        self._fed += len(data)
        self._conn.receive_data(data)
        self.process()

    def resume(self) -> None:
        """Read on, unless a frame is being decoded or waits for the next
        turn (reading resumes once that is done)."""
        if not (self.busy or self._later):
            self._channel.resume_reading()

    def eof(self) -> None:
        self._conn.receive_eof()
        self.process()

    @property
    def quiet(self) -> bool:
        """Whether every frame received so far has been processed."""
        return self._quiet.is_set()

    async def settled(self) -> None:
        """Until every frame received so far has been processed."""
        await self._quiet.wait()

    def process(self) -> None:
        if self.busy or self._later:
            return  # it goes on from there
        try:
            while not self._finished():
                if self._budget <= 0:
                    self._next_turn()
                    return
                size = self._conn.ready_payload_size()
                self._charge()  # extension frames it discarded
                if size is not None and size > APART_BYTES:
                    self._decode_apart(size)
                    return
                if size is not None and size > self._budget:
                    self._next_turn()
                    return
                event = self._conn.next_event()
                self._charge()
                if event is NEED_DATA:
                    if self._budget > 0:
                        break
                    continue  # spent: reading waits for the next turn
                self._on_event(event)
        except Exception as exc:  # RemoteProtocolError, or a bug of ours
            self._on_error(exc)
        self._quiet.set()
        if not self._finished():
            self._channel.resume_reading()

    def _charge(self) -> None:
        """Take what the connection took off the stream on the loop since
        the last charge from this turn's budget."""
        taken = self._fed - self._conn.buffered
        if taken > self._charged:
            if self._budget == TURN_BYTES:
                self._loop.call_soon(self._refill)
            self._budget -= taken - self._charged
            self._charged = taken

    def _refill(self) -> None:
        self._budget = TURN_BYTES

    def _next_turn(self) -> None:
        self._later = True
        self._quiet.clear()
        self._channel.pause_reading()
        self._loop.call_soon(self._go_on)

    def _go_on(self) -> None:
        self._later = False
        self.process()

    def _decode_apart(self, size: int) -> None:
        self._charged += size  # the thread's, not the loop's
        self.busy = True
        self._quiet.clear()
        self._channel.pause_reading()
        job = paced(decoding, self._conn.next_event)
        job.add_done_callback(self._decoded)

    def _decoded(self, job: asyncio.Future[Event | NeedData]) -> None:
        self.busy = False
        if self._finished():
            job.exception()  # retrieved: the run is over, its frame does not matter
            self._quiet.set()
            return
        try:
            event = job.result()
        except Exception as exc:
            self._on_error(exc)
            self._quiet.set()
            return
        if event is not NEED_DATA:
            self._on_event(event)
        held, self._held = self._held, []
        for message, payload in held if not self._finished() else ():
            self.send(message, payload)
        self.process()
