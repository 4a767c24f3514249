"""The CPython guest's protocol loop (spec §7, guest role).

HELLO, wait for RUN, apply the resource limits, then run the program on an
asyncio loop whose only I/O is fd 3: binding calls become CALL frames,
``print`` becomes OUTPUT frames, the end of the program becomes DONE.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import platform
import signal
import socket
import sys
import threading
from typing import Any, Final

from tether import __version__
from tether.codec import (
    CONNECTION_CLOSED,
    ENVELOPE_OVERHEAD,
    NEED_DATA,
    Call,
    Cancel,
    Connection,
    Done,
    Error,
    ErrorCode,
    Hello,
    Output,
    ProgramError,
    ProtocolError,
    Result,
    Role,
    Run,
    RunLimits,
    Stream,
    ValueModelError,
    encode_payload,
    to_wire,
)

from .program import ProgramReturn, compile_program, describe, program_globals

CHANNEL_FD: Final = 3
LANGUAGES: Final = ("python",)
#: Output is sent in chunks no larger than this (and the frame ceiling).
OUTPUT_CHUNK: Final = 64 * 1024
#: Text buffered per stream before it is sent, when no newline comes.
OUTPUT_BUFFER: Final = 8 * 1024
#: a1 65 "value": the bytes DONE's envelope adds around the value.
DONE_ENVELOPE: Final = 7


class BindingError(Exception):
    """A binding call failed on the host. ``type`` names the host's error
    (its exception class for a binding that raised), ``code`` is the
    tether call error code, ``message`` the host's text."""

    def __init__(self, name: str, type: str, message: str, code: int) -> None:
        super().__init__(f"{type}: {message}" if message else type)
        self.binding = name
        self.type = type
        self.message = message
        self.code = code


class Channel:
    """fd 3: blocking writes, reads driven by the event loop."""

    def __init__(self) -> None:
        self.sock = socket.socket(fileno=CHANNEL_FD)
        self.conn = Connection(Role.GUEST)
        self._lock = threading.Lock()  # program threads print too

    def send(self, message: Any, payload: bytes | None = None) -> None:
        with self._lock:
            self.sock.sendall(self.conn.send(message, payload))

    def receive_blocking(self) -> Any:
        """The next message, reading as needed (before the loop runs)."""
        while True:
            event = self.conn.next_event()
            if event is not NEED_DATA:
                return event
            data = self.sock.recv(1 << 18)
            if data:
                self.conn.receive_data(data)
            else:
                self.conn.receive_eof()

    def fail(self, exc: ProtocolError) -> None:
        """Report a connection error to the host and leave (R-ERR-1)."""
        with contextlib.suppress(OSError, ProtocolError):
            self.send(Error(exc.code, exc.message))
        os._exit(1)


class OutputChannel:
    """Turns writes to sys.stdout/sys.stderr into OUTPUT frames, in order."""

    def __init__(self, channel: Channel, limits: RunLimits) -> None:
        self._channel = channel
        self._stream = Stream.STDOUT
        self._pending: list[str] = []
        self._pending_len = 0
        self._budget = limits.output_bytes
        self._chunk = min(OUTPUT_CHUNK, limits.frame_bytes - ENVELOPE_OVERHEAD) // 4
        self._lock = threading.RLock()

    def write(self, stream: Stream, text: str) -> None:
        with self._lock:
            if stream is not self._stream:
                self.flush()
                self._stream = stream
            self._pending.append(text)
            self._pending_len += len(text)
            if "\n" in text or self._pending_len >= OUTPUT_BUFFER:
                self.flush()

    def flush(self) -> None:
        with self._lock:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        text = "".join(self._pending)
        self._pending.clear()
        self._pending_len = 0
        for start in range(0, len(text), self._chunk):
            if self._budget < 0:
                return  # past the cap: the host drops it anyway (R-OUTPUT-3)
            chunk = _valid_unicode(text[start : start + self._chunk])
            self._budget -= len(chunk.encode())
            self._channel.send(Output(self._stream, chunk))


def _valid_unicode(text: str) -> str:
    """Lone surrogates become U+FFFD (R-OUTPUT-2)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class ProgramStream(io.TextIOBase):
    """What the program sees as sys.stdout / sys.stderr."""

    def __init__(self, output: OutputChannel, stream: Stream) -> None:
        self._output = output
        self._stream = stream

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

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._output.write(self._stream, text)
        return len(text)

    def flush(self) -> None:
        self._output.flush()


class Guest:
    """One run: the program, its binding calls and their results."""

    def __init__(self, channel: Channel, run: Run) -> None:
        self.channel = channel
        self.run = run
        self.limits = run.limits
        self.output = OutputChannel(channel, run.limits)
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._slots: asyncio.Semaphore | None = None
        self._main: asyncio.Task[Any] | None = None

    # -- binding calls -----------------------------------------------------

    def make_binding(self, name: str) -> Any:
        async def binding(*args: Any, **kwargs: Any) -> Any:
            return await self.call(name, args, kwargs)

        binding.__name__ = binding.__qualname__ = name
        return binding

    async def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        depth = self.limits.max_depth
        wire_args = []
        for index, arg in enumerate(args):
            try:
                wire_args.append(to_wire(arg, depth))
            except ValueModelError as exc:
                raise TypeError(f"{name}() argument {index + 1}: {exc}") from None
        wire_kwargs = {}
        for key, arg in kwargs.items():
            try:
                wire_kwargs[key] = to_wire(arg, depth)
            except ValueModelError as exc:
                raise TypeError(f"{name}() argument {key!r}: {exc}") from None
        size = len(encode_payload({"": [wire_args, wire_kwargs]})) - 2
        if size > self.limits.value_bytes:
            raise ValueError(
                f"{name}() arguments take {size} bytes, over the limit of "
                f"{self.limits.value_bytes} (value_bytes)"
            )
        assert self._slots is not None
        async with self._slots:  # R-CALL-3: queue beyond max_calls_in_flight
            self._next_id += 1
            call_id = self._next_id
            future = asyncio.get_running_loop().create_future()
            self._pending[call_id] = future
            try:
                self.output.flush()
                self.channel.send(Call(id=call_id, name=name, args=wire_args, kwargs=wire_kwargs))
                result: Result = await future
            finally:
                self._pending.pop(call_id, None)
        if result.error is not None:
            error = result.error
            raise BindingError(name, error.type, error.message, int(error.code))
        return result.value

    # -- the loop ----------------------------------------------------------

    def on_readable(self) -> None:
        conn = self.channel.conn
        try:
            data = self.channel.sock.recv(1 << 18)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            conn.receive_data(data)
        else:
            conn.receive_eof()
        try:
            while (event := conn.next_event()) is not NEED_DATA:
                if isinstance(event, Result):
                    future = self._pending.get(event.id)
                    if future is not None and not future.done():
                        future.set_result(event)
                elif isinstance(event, Cancel) or event is CONNECTION_CLOSED:
                    self._stop()  # R-TRANS-4, R-CANCEL-1
                    if event is CONNECTION_CLOSED:
                        asyncio.get_running_loop().remove_reader(CHANNEL_FD)
                        return
                else:
                    self.channel.fail(
                        ProtocolError(ErrorCode.UNEXPECTED_MESSAGE, f"{type(event).__name__}")
                    )
        except ProtocolError as exc:
            self.channel.fail(exc)

    def _stop(self) -> None:
        if self._main is not None:
            self._main.cancel()

    async def main(self, code: Any, namespace: dict[str, Any]) -> Any:
        loop = asyncio.get_running_loop()
        self._slots = asyncio.Semaphore(self.limits.max_calls_in_flight)
        self._main = asyncio.current_task()
        loop.add_reader(CHANNEL_FD, self.on_readable)
        try:
            awaitable = eval(code, namespace)  # top-level await: a coroutine, or None
            if awaitable is not None:
                await awaitable
        except ProgramReturn as ret:
            return ret.value
        finally:
            loop.remove_reader(CHANNEL_FD)
        return None


def run_program(channel: Channel, run: Run, loop: asyncio.AbstractEventLoop) -> None:
    """Run the program and send its DONE (R-DONE-1)."""
    guest = Guest(channel, run)
    names = {b.name: guest.make_binding(b.name) for b in run.bindings}
    names["BindingError"] = BindingError
    sys.stdout = ProgramStream(guest.output, Stream.STDOUT)
    sys.stderr = ProgramStream(guest.output, Stream.STDERR)
    try:
        code = compile_program(run.source)
        value = loop.run_until_complete(guest.main(code, program_globals(names)))
    except asyncio.CancelledError:
        guest.output.flush()
        channel.send(Done(error=ProgramError(type="Cancelled", message="the run was cancelled")))
        return
    except BaseException as exc:  # everything the program raises is data
        guest.output.flush()
        channel.send(Done(error=describe(exc)))
        return
    guest.output.flush()
    try:
        wire = to_wire(value, run.limits.max_depth)
    except ValueModelError as exc:
        channel.send(Done(error=ProgramError(type="TypeError", message=f"return value {exc}")))
        return
    payload = encode_payload({"value": wire})  # encoded once: for the size and to send
    size = len(payload) - DONE_ENVELOPE
    if size > run.limits.value_bytes:
        channel.send(Done(error=ProgramError(
            type="ValueError",
            message=f"return value takes {size} bytes, over the limit of "
                    f"{run.limits.value_bytes} (value_bytes)",
            code=ErrorCode.VALUE_TOO_LARGE,
        )))
        return
    channel.send(Done(value=wire), payload)


def main(cwd: str | None) -> None:
    if cwd is not None:
        os.chdir(cwd)
    channel = Channel()
    real_stdout, real_stderr = sys.stdout, sys.stderr
    try:
        channel.send(Hello(
            implementation=f"tether-python/{__version__} "
                           f"{platform.python_implementation()}/{platform.python_version()}",
            languages=LANGUAGES,
        ))
        # Made while the host has nothing for us yet, so RUN does not wait for it.
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        run = channel.receive_blocking()
        if run is CONNECTION_CLOSED:
            os._exit(0)
        if not isinstance(run, Run):
            raise ProtocolError(ErrorCode.UNEXPECTED_MESSAGE, f"expected RUN, got {run!r}")
        if run.language not in LANGUAGES:
            raise ProtocolError(ErrorCode.LANGUAGE_UNSUPPORTED, f"cannot run {run.language!r}")
        # Past file_bytes (RLIMIT_FSIZE, set by the host) a write fails with
        # EFBIG instead of killing the process.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        run_program(channel, run, loop)
    except ProtocolError as exc:
        channel.fail(exc)
    except OSError:
        os._exit(1)  # the host went away
    finally:
        for stream in (real_stdout, real_stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
    os._exit(0)  # R-DONE-4: nothing of the program's outlives DONE
