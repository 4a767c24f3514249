"""The host's end of fd 3 on the event loop: reads feed a callback, writes
never block (an outbox drains when the socket is writable again).

A bounded number of reads per turn of the loop: a guest that keeps the
socket full gets no more of the loop than any other reader, and its owner
may pause reading (the guest then blocks on a full socket) while it works
through a backlog."""

from __future__ import annotations

import asyncio
import collections
import functools
import itertools
import socket
from collections.abc import Callable

#: Below glibc malloc's mmap threshold (128 KiB): a larger recv buffer costs an
#: mmap and a munmap per read.
READ_SIZE = 64 * 1024
#: Reads per turn of the loop at most: copying bytes in is cheap (decoding is
#: what the reader bounds), and a large frame should not need hundreds of turns.
READS_PER_TURN = 16
#: The send buffer asked for on both ends of a guest's channel (the kernel
#: caps it at net.core.wmem_max, then doubles it for its bookkeeping). With
#: the default, ~200 KiB, a 1 MB value goes out in five turns, each waiting
#: for the other side to read; with this, in one. (A program may enlarge its
#: own end as far itself: it bounds nothing on that side.)
SEND_BUFFER_BYTES = 1024 * 1024
#: Bytes sent that the guest has not read, past which it is not read until it
#: reads: a guest that sends calls and never reads their results cannot grow
#: the host's memory. They wait in the socket (its whole send buffer, at most
#: twice SEND_BUFFER_BYTES) and then in the outbox.
UNREAD_LIMIT = 4 * 1024 * 1024
OUTBOX_LIMIT = UNREAD_LIMIT - 2 * SEND_BUFFER_BYTES
#: Buffers one sendmsg() takes at most (Linux's UIO_MAXIOV).
IOV_MAX = 1024


def channel_pair() -> tuple[socket.socket, socket.socket]:
    """A connected pair of Unix stream sockets for a guest's channel (host
    end first), each given :data:`SEND_BUFFER_BYTES` to send from where that
    is more than the kernel's default."""
    pair = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    if _larger_buffers():
        for end in pair:
            end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)
    return pair


@functools.cache
def _larger_buffers() -> bool:
    """Whether asking for SEND_BUFFER_BYTES enlarges a socket's send buffer
    (where net.core.wmem_max is below the default, it would shrink it)."""
    probe, other = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with probe, other:
        default = probe.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)
        return probe.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) > default


def _drop_sent(views: collections.deque[memoryview], sent: int) -> None:
    """Take the ``sent`` bytes that went out off the front of ``views``."""
    while views and sent >= len(views[0]):
        sent -= len(views.popleft())
    if views and sent:
        views[0] = views[0][sent:]


class Channel:
    def __init__(
        self,
        sock: socket.socket,
        on_data: Callable[[bytes], None],
        on_eof: Callable[[], None],
        tap: Callable[[str, bytes], None] | None = None,
        *,
        reading: bool = True,
    ) -> None:
        """``reading``: start reading now; else at :meth:`resume_reading`
        (a first write goes out before the event loop watches the socket)."""
        self._sock = sock
        self._on_data = on_data
        self._on_eof = on_eof
        self._tap = tap  # sees ("in" | "out", bytes) in wire order (Observer.wire)
        self._loop = asyncio.get_running_loop()
        self._outbox: collections.deque[memoryview] = collections.deque()
        self._unsent = 0  # bytes in the outbox
        self._reading = False
        self._closed = False
        self._writing = True
        self._eof = False
        self._want_reading = True  # by the owner; a full outbox pauses reading too
        self.bytes_in = 0
        self.bytes_out = 0
        if reading:
            self.resume_reading()

    def read_available(self, *, everything: bool = False) -> bool:
        """Read up to READS_PER_TURN times; with ``everything``, what the
        socket holds right now (to drain the channel once the child has
        exited: a short read means it is empty). True once nothing is left to
        read; False if reading was paused or the turn's reads were used up."""
        reads = 0
        while self._reading:
            try:
                data = self._sock.recv(READ_SIZE)
            except BlockingIOError:
                return True
            except OSError:
                data = b""
            if not data:
                self._eof = True
                self._stop_reading()
                self._on_eof()
                return True
            self.bytes_in += len(data)
            if self._tap is not None:
                self._tap("in", data)
            self._on_data(data)
            reads += 1
            if len(data) < READ_SIZE:
                return True
            if not everything and reads >= READS_PER_TURN:
                return False  # level-triggered: the next turn reads on
        return self._eof or self._closed

    def write(self, *parts: bytes) -> None:
        """Send ``parts`` (a frame's header and its payload, say) in order,
        without joining them: what the socket does not take now waits as
        views of them, so a large payload is never copied here."""
        if self._closed or not self._writing:
            return
        for part in parts:
            self.bytes_out += len(part)
            if self._tap is not None:
                self._tap("out", part)
        views = collections.deque(memoryview(part) for part in parts if part)
        if not self._outbox:
            try:
                sent = self._sock.sendmsg(views)
            except BlockingIOError:
                sent = 0
            except OSError:
                return  # the guest is gone; its exit is noticed elsewhere
            _drop_sent(views, sent)
            if views:
                self._loop.add_writer(self._sock.fileno(), self._flush)
        self._outbox.extend(views)
        self._unsent += sum(len(view) for view in views)
        if self._unsent > OUTBOX_LIMIT:
            self._stop_reading()

    def _flush(self) -> None:
        try:
            sent = self._sock.sendmsg(list(itertools.islice(self._outbox, IOV_MAX)))
        except BlockingIOError:
            return
        except OSError:
            sent = self._unsent
        self._unsent -= sent
        _drop_sent(self._outbox, sent)
        if not self._outbox:
            self._loop.remove_writer(self._sock.fileno())
        if self._unsent <= OUTBOX_LIMIT and self._want_reading:
            self.resume_reading()

    def stop_writing(self) -> None:
        """The guest has exited: what it has not read, nothing will (a
        descendant may hold its end and never read), so that waits no more
        and no longer keeps the channel from reading."""
        self._writing = False
        if self._outbox and not self._closed:
            self._loop.remove_writer(self._sock.fileno())
        self._outbox.clear()
        self._unsent = 0
        if self._want_reading:
            self.resume_reading()

    def _stop_reading(self) -> None:
        if self._reading:
            self._reading = False
            self._loop.remove_reader(self._sock.fileno())

    def pause_reading(self) -> None:
        """Stop reading until :meth:`resume_reading` (the owner's backlog)."""
        self._want_reading = False
        self._stop_reading()

    def resume_reading(self) -> None:
        self._want_reading = True
        if not self._reading and not self._closed and not self._eof \
                and self._unsent <= OUTBOX_LIMIT:
            self._reading = True
            self._loop.add_reader(self._sock.fileno(), self.read_available)

    def close(self) -> None:
        """Stop all I/O; the socket itself is closed by its owner."""
        self._stop_reading()
        if not self._closed:
            self._closed = True
            if self._outbox:
                self._loop.remove_writer(self._sock.fileno())
                self._outbox.clear()
                self._unsent = 0
