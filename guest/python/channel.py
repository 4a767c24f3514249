"""The CPython guest's channel: frames over fd 3 (or the stdio transport's
pipes), and the program's printed text buffered into OUTPUT frames."""

from __future__ import annotations

import codecs
import contextlib
import io
import os
import re
import socket
import stat
import threading
from collections.abc import Callable
from typing import Any, Final, NoReturn

from tether.codec import (
    ENVELOPE_OVERHEAD,
    NEED_DATA,
    Connection,
    Error,
    Output,
    Payload,
    ProtocolError,
    Role,
    RunLimits,
    Stream,
    payload_pieces,
    payload_size,
)

from .raw_output import RawOutput

CHANNEL_FD: Final = 3
#: Output is sent in chunks no larger than this (and the frame ceiling).
OUTPUT_CHUNK: Final = 64 * 1024
#: Text buffered per stream before it is sent, when no newline comes.
OUTPUT_BUFFER: Final = 8 * 1024
#: Bytes read from fd 3 at a time: below glibc malloc's mmap threshold, since
#: a larger buffer costs an mmap and a munmap per read.
RECV_SIZE: Final = 64 * 1024
#: Payloads from this size on are written after their header, not copied to it.
WRITE_APART: Final = 64 * 1024


class Channel:
    """fd 3 (or, for the stdio transport, two pipes): blocking writes, reads
    driven by the event loop."""

    def __init__(self, read_fd: int = CHANNEL_FD, write_fd: int = CHANNEL_FD) -> None:
        self.sock = socket.socket(fileno=read_fd) if read_fd == write_fd else None
        self.read_fd, self.write_fd = read_fd, write_fd
        self.conn = Connection(Role.GUEST, reserve_payloads=True)  # the host is trusted
        self._lock = threading.Lock()  # program threads print too

    @classmethod
    def stdio(cls) -> Channel:
        """The stdio transport (spec §3.1): frames in on fd 0, out on fd 1,
        moved to private descriptors first; the program's fd 0 then reads
        /dev/null and its fd 1 writes where fd 2 does (R-STDIO-1)."""
        read_fd, write_fd = _own_description(0, os.O_RDONLY), os.dup(1)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)
        return cls(read_fd, write_fd)

    def receive(self) -> None:
        """Read what has arrived into the connection (at EOF: the EOF). A
        large frame's payload is read straight into its buffer, as much as
        there is; BlockingIOError when nothing was there."""
        view = self.conn.payload_view()
        if view is None:
            data = self.sock.recv(RECV_SIZE) if self.sock is not None else \
                os.read(self.read_fd, RECV_SIZE)
            if data:
                self.conn.receive_data(data)
            else:
                self.conn.receive_eof()
            return
        with view:
            got = 0
            while got < len(view):
                try:
                    size = self.sock.recv_into(view[got:]) if self.sock is not None else \
                        os.readv(self.read_fd, [view[got:]])
                except BlockingIOError:
                    if got:
                        break
                    raise
                if not size:
                    break
                got += size
        self.conn.received(got)
        if not got:
            self.conn.receive_eof()

    def send(self, message: Any, payload: Payload | None = None) -> None:
        with self._lock:
            header, payload = self.conn.send_parts(message, payload)
            if self.sock is not None and payload_size(payload) < WRITE_APART:
                self.sock.sendall(b"".join((header, *payload_pieces(payload))))
                return
            parts = [memoryview(piece) for piece in (header, *payload_pieces(payload))]
            while parts:  # a large payload goes out without a copy behind its header
                sent = self.sock.sendmsg(parts) if self.sock is not None else \
                    os.writev(self.write_fd, parts)
                while parts and sent >= len(parts[0]):
                    sent -= len(parts.pop(0))
                if parts:
                    parts[0] = parts[0][sent:]

    def receive_blocking(self) -> Any:
        """The next message, reading as needed (before the loop runs)."""
        while True:
            event = self.conn.next_event()
            if event is not NEED_DATA:
                return event
            self.receive()

    def fail(self, exc: ProtocolError) -> NoReturn:
        """Report a connection error to the host and leave (R-ERR-1)."""
        with contextlib.suppress(OSError, ProtocolError):
            self.send(Error(exc.code, exc.message))
        os._exit(1)


def _own_description(fd: int, flags: int) -> int:
    """``fd``'s pipe on an open file description of the guest's own: the
    carrier that started the guest may hold the one ``fd`` is on, and the
    flags the guest sets on its channel (O_ASYNC and the signal's owner,
    R-STDIO-7) must not become the carrier's. Anything but a pipe (a socket,
    a file read from its offset) is only copied."""
    if stat.S_ISFIFO(os.fstat(fd).st_mode):
        with contextlib.suppress(OSError):  # no /proc to reopen it by
            # Not blocking: opening a pipe waits for a writer, and the host's
            # may be gone already (its end of stream is read as any other).
            own = os.open(f"/proc/self/fd/{fd}", flags | os.O_NONBLOCK)
            os.set_blocking(own, True)
            return own
    return os.dup(fd)


class OutputBuffer:
    """Turns writes to sys.stdout/sys.stderr into OUTPUT frames, in order;
    with ``raw``, what was written below them to fds 1 and 2 goes first
    (R-OUTPUT-5)."""

    def __init__(self, channel: Channel, limits: RunLimits, raw: RawOutput | None = None) -> None:
        self._channel = channel
        self.raw = raw
        self._stream = Stream.STDOUT
        self._pending: list[str] = []
        self._pending_len = 0
        self._chunk = min(OUTPUT_CHUNK, limits.frame_bytes - ENVELOPE_OVERHEAD) // 4
        self._lock = threading.RLock()
        # Bytes the program wrote, decoded as UTF-8; what ends in the middle
        # of a character is held until the next write completes it.
        self._bytes: dict[Stream, codecs.IncrementalDecoder] = {}
        self._raw_bytes: dict[Stream, codecs.IncrementalDecoder] = {}  # as those, for fds 1 and 2

    def write(self, stream: Stream, text: str) -> None:
        with self._lock:
            if stream is not self._stream:
                self._end_bytes()  # R-OUTPUT-4: before writing to the other stream
                self._flush()
                self._stream = stream
            self._pending.append(text)
            self._pending_len += len(text)
            # Sent at each line, not held until DONE, so what a program printed
            # before it was killed has reached the host (figures: bench/README.md).
            if "\n" in text or self._pending_len >= OUTPUT_BUFFER:
                self._flush()

    def write_bytes(self, stream: Stream, data: bytes) -> None:
        """Bytes, each bad sequence one U+FFFD (R-OUTPUT-4)."""
        with self._lock:
            decoder = self._bytes.get(stream)
            if decoder is None:
                decoder = self._bytes[stream] = codecs.getincrementaldecoder("utf-8")("replace")
            text = decoder.decode(data)
            if text:
                self.write(stream, text)

    def flush(self) -> None:
        """Send everything written, held bytes too: before a CALL and DONE."""
        with self._lock:
            self._end_bytes()
            self._flush(final=True)

    def _end_bytes(self) -> None:
        decoder = self._bytes.get(self._stream)  # only the last stream written holds any
        if decoder is not None:
            text = decoder.decode(b"", final=True)
            if text:
                self._pending.append(text)
                self._pending_len += len(text)

    def _flush(self, *, final: bool = False) -> None:
        if self.raw is not None:  # written below print before this text was
            self._send_raw(self.raw, final=final)
        if not self._pending:
            return
        text = "".join(self._pending)
        self._pending.clear()
        self._pending_len = 0
        self._send(self._stream, text)

    def _send_raw(self, raw: RawOutput, *, final: bool) -> None:
        for stream, data in raw.take():
            decoder = self._raw_bytes.get(stream)
            if decoder is None:
                decoder = self._raw_bytes[stream] = codecs.getincrementaldecoder("utf-8")("replace")
            self._send(stream, decoder.decode(data))
        if final:
            for stream, decoder in self._raw_bytes.items():
                self._send(stream, decoder.decode(b"", final=True))

    def _send(self, stream: Stream, text: str) -> None:
        for start in range(0, len(text), self._chunk):
            # All of it, past output_bytes too: the host keeps the end (R-OUTPUT-3).
            chunk = valid_unicode(text[start : start + self._chunk])
            self._channel.send(Output(stream, chunk))


def valid_unicode(text: str) -> str:
    """Surrogates become U+FFFD (R-OUTPUT-2): in a Python string each one
    stands alone, even where two would make a pair in UTF-16."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


_SURROGATE: Final = re.compile("[\ud800-\udfff]")


class ProgramStream(io.TextIOBase):
    """What the program sees as sys.stdout / sys.stderr: its ``fileno()`` is
    fd 1 or 2 where the guest captures them (R-OUTPUT-5)."""

    def __init__(self, output: OutputBuffer, stream: Stream,
                 returning: Callable[[], None] = lambda: None) -> None:
        self._output = output
        self._stream = stream
        self._returning = returning  # called as each write returns to the program
        self._bytes: ProgramBytes | None = None

    @property
    def buffer(self) -> ProgramBytes:
        """The stream as bytes (made when a program first asks for it)."""
        if self._bytes is None:
            self._bytes = ProgramBytes(self._output, self._stream, self._returning)
        return self._bytes

    def reconfigure(self, **changes: Any) -> None:
        """Accepted and ignored: the output is UTF-8 text, written through
        as the guest sends it, whatever a program asks for."""

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    @property
    def name(self) -> str:
        return f"<{self._stream.value}>"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return _fileno(self._output, self._stream)

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._output.write(self._stream, text)
        self._returning()
        return len(text)

    def flush(self) -> None:
        self._output.flush()


class ProgramBytes(io.BufferedIOBase):
    """What the program sees as ``sys.stdout.buffer``: bytes decoded as UTF-8
    into the stream's text (:meth:`OutputBuffer.write_bytes`)."""

    def __init__(self, output: OutputBuffer, stream: Stream,
                 returning: Callable[[], None]) -> None:
        super().__init__()
        self._output = output
        self._stream = stream
        self._returning = returning

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return _fileno(self._output, self._stream)

    def write(self, data: Any) -> int:
        if self.closed:
            raise ValueError("write to closed file")
        view = memoryview(data)
        self._output.write_bytes(self._stream, view.tobytes())
        self._returning()
        return view.nbytes


def _fileno(output: OutputBuffer, stream: Stream) -> int:
    if output.raw is None:
        raise io.UnsupportedOperation("fileno")
    return output.raw.fileno(stream)
