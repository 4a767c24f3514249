"""The host's end of fd 3 on the event loop: reads feed a callback, writes
never block (an outbox drains when the socket is writable again)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable

#: Below glibc malloc's mmap threshold (128 KiB): a larger recv buffer costs an
#: mmap and a munmap per read.
READ_SIZE = 64 * 1024


class Channel:
    def __init__(
        self,
        sock: socket.socket,
        on_data: Callable[[bytes], None],
        on_eof: Callable[[], None],
        tap: Callable[[str, bytes], None] | None = None,
    ) -> None:
        self._sock = sock
        self._on_data = on_data
        self._on_eof = on_eof
        self._tap = tap  # sees ("in" | "out", bytes) in wire order (the conformance recorder)
        self._loop = asyncio.get_running_loop()
        self._outbox = bytearray()
        self._reading = True
        self._closed = False
        self.bytes_in = 0
        self.bytes_out = 0
        self._loop.add_reader(sock.fileno(), self.read_available)

    def read_available(self) -> None:
        """Read what the socket holds right now (also used to drain the
        channel once the child has exited: a short read means it is empty)."""
        while self._reading:
            try:
                data = self._sock.recv(READ_SIZE)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self._stop_reading()
                self._on_eof()
                return
            self.bytes_in += len(data)
            if self._tap is not None:
                self._tap("in", data)
            self._on_data(data)
            if len(data) < READ_SIZE:
                return  # drained: the reader is level-triggered, so more data calls again

    def write(self, data: bytes) -> None:
        if self._closed:
            return
        self.bytes_out += len(data)
        if self._tap is not None:
            self._tap("out", data)
        if self._outbox:
            self._outbox += data
            return
        try:
            sent = self._sock.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:
            return  # the guest is gone; its exit is noticed elsewhere
        if sent < len(data):
            self._outbox += data[sent:]
            self._loop.add_writer(self._sock.fileno(), self._flush)

    def _flush(self) -> None:
        try:
            sent = self._sock.send(self._outbox)
        except BlockingIOError:
            return
        except OSError:
            sent = len(self._outbox)
        del self._outbox[:sent]
        if not self._outbox:
            self._loop.remove_writer(self._sock.fileno())

    def stop_reading(self) -> None:
        self._stop_reading()

    def _stop_reading(self) -> None:
        if self._reading:
            self._reading = False
            self._loop.remove_reader(self._sock.fileno())

    def close(self) -> None:
        """Stop all I/O; the socket itself is closed by its owner."""
        self._stop_reading()
        if not self._closed:
            self._closed = True
            if self._outbox:
                self._loop.remove_writer(self._sock.fileno())
                self._outbox.clear()
