"""The CPython guest's protocol loop (spec §7, guest role).

HELLO, wait for RUN, apply the resource limits, then run the program on an
asyncio loop whose only I/O is fd 3: binding calls become CALL frames,
``print`` becomes OUTPUT frames, the end of the program becomes DONE.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import signal
import socket
import sys
import threading
from collections.abc import Sequence
from types import CodeType
from typing import Any, Final, NoReturn

from tether import __version__
from tether.codec import (
    CONNECTION_CLOSED,
    ENVELOPE_OVERHEAD,
    NEED_DATA,
    Binding,
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
    Value,
    ValueModelError,
    count_items,
    encode_payload,
    exceeds_value_items,
    to_wire_plain,
    value_items,
    variable_name_problem,
)

from .described import describe as describe_binding
from .described import help as program_help
from .program import (
    ProgramReturn,
    compile_program,
    describe,
    program_globals,
    top_level_names,
)

CHANNEL_FD: Final = 3
LANGUAGES: Final = ("python",)
#: Output is sent in chunks no larger than this (and the frame ceiling).
OUTPUT_CHUNK: Final = 64 * 1024
#: Text buffered per stream before it is sent, when no newline comes.
OUTPUT_BUFFER: Final = 8 * 1024
#: a1 65 "value": the bytes DONE's envelope adds around the value.
DONE_ENVELOPE: Final = 7
#: Bytes read from fd 3 at a time: below glibc malloc's mmap threshold, since
#: a larger buffer costs an mmap and a munmap per read.
RECV_SIZE: Final = 64 * 1024
#: Payloads from this size on are written after their header, not copied to it.
WRITE_APART: Final = 64 * 1024


class BindingError(Exception):
    """A binding call failed on the host (R-RESULT-5). ``type`` names the
    host's error (its exception class for a binding that raised), ``message``
    is the host's text as sent, ``code`` the tether call error code,
    ``binding`` the binding's name; ``str()`` is ``TYPE: MESSAGE``."""

    # A name of the program's globals, as a builtin's: tracebacks show
    # ``BindingError``, not the shim's module path.
    __module__ = "builtins"

    def __init__(self, name: str, type: str, message: str, code: int) -> None:
        super().__init__(f"{type}: {message}" if message else type)
        self.binding = name
        self.type = type
        self.message = message
        self.code = code


# Tracebacks name it as the program sees it, not by the guest's module (R-DONE-2).
BindingError.__module__ = "builtins"


class Channel:
    """fd 3 (or, for the stdio transport, two pipes): blocking writes, reads
    driven by the event loop."""

    def __init__(self, read_fd: int = CHANNEL_FD, write_fd: int = CHANNEL_FD) -> None:
        self.sock = socket.socket(fileno=CHANNEL_FD) if read_fd == write_fd else None
        self.read_fd, self.write_fd = read_fd, write_fd
        self.conn = Connection(Role.GUEST)
        self._lock = threading.Lock()  # program threads print too

    @classmethod
    def stdio(cls) -> Channel:
        """The stdio transport (spec §3.1): frames in on fd 0, out on fd 1,
        moved to private descriptors first; the program's fd 0 then reads
        /dev/null and its fd 1 writes where fd 2 does (R-STDIO-1)."""
        read_fd, write_fd = os.dup(0), os.dup(1)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)
        return cls(read_fd, write_fd)

    def recv(self) -> bytes:
        return self.sock.recv(RECV_SIZE) if self.sock is not None else \
            os.read(self.read_fd, RECV_SIZE)

    def send(self, message: Any, payload: bytes | None = None) -> None:
        with self._lock:
            header, payload = self.conn.send_parts(message, payload)
            if self.sock is not None and len(payload) < WRITE_APART:
                self.sock.sendall(header + payload)
                return
            parts = [memoryview(header), memoryview(payload)]
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
            data = self.recv()
            if data:
                self.conn.receive_data(data)
            else:
                self.conn.receive_eof()

    def fail(self, exc: ProtocolError) -> NoReturn:
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
            # All of it, past output_bytes too: the host keeps the end (R-OUTPUT-3).
            chunk = _valid_unicode(text[start : start + self._chunk])
            self._channel.send(Output(self._stream, chunk))


#: The longest error type name a DONE carries (R-DONE-7).
MAX_ERROR_TYPE_BYTES: Final = 256


def fit_error(error: ProgramError, budget: int) -> ProgramError:
    """R-DONE-7: valid text in every field, and a DONE payload within
    ``budget`` bytes: the traceback is shortened first, then the message."""
    error = dataclasses.replace(
        error, type=_cut(_valid_unicode(error.type), MAX_ERROR_TYPE_BYTES),
        message=_valid_unicode(error.message), traceback=_valid_unicode(error.traceback))
    size = len(encode_payload({"error": error.to_wire()}))
    if size <= budget:
        return error
    # Room for the two texts: what the rest takes, and up to 8 bytes of lengths.
    empty = dataclasses.replace(error, message="", traceback="")
    room = max(0, budget - len(encode_payload({"error": empty.to_wire()})) - 8)
    message = _cut(error.message, room)
    traceback = _cut(error.traceback, room - len(message.encode()))
    return dataclasses.replace(error, message=message, traceback=traceback)


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` UTF-8 bytes, cut at a code point and ending
    with an ellipsis when cut."""
    data = text.encode()
    if len(data) <= limit:
        return text
    if limit < 3:
        return ""
    return data[: limit - 3].decode(errors="ignore") + "\u2026"


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


def wire_arguments(name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                   limits: RunLimits) -> tuple[list[Value], dict[str, Value]]:
    """A call's arguments as wire values, or the program's error at the call
    (R-VAL-2, R-CALL-4): nothing is sent for a call that cannot be."""
    wire_args = []
    all_plain = True
    for index, arg in enumerate(args):
        try:
            wire, plain = to_wire_plain(arg, limits.max_depth)
        except ValueModelError as exc:
            raise TypeError(f"{name}() argument {index + 1}: {exc}") from None
        wire_args.append(wire)
        all_plain = all_plain and plain
    wire_kwargs = {}
    for key, arg in kwargs.items():
        try:
            wire_kwargs[key], plain = to_wire_plain(arg, limits.max_depth)
        except ValueModelError as exc:
            raise TypeError(f"{name}() argument {key!r}: {exc}") from None
        all_plain = all_plain and plain
    payload = encode_payload({"": [wire_args, wire_kwargs]}, plain=all_plain)
    size = len(payload) - 2
    if size > limits.value_bytes:
        raise ValueError(f"{name}() arguments take {size} bytes, over the limit of "
                         f"{limits.value_bytes} (value_bytes)")
    if exceeds_value_items(payload, limits.value_bytes, 2):
        raise ValueError(f"{name}() arguments hold more than "
                         f"{value_items(limits.value_bytes)} values (value_bytes / 16)")
    return wire_args, wire_kwargs


class ProgramCancelled(BaseException):  # not the program's error: no "Error" suffix
    """Raised into a program run without asyncio when CANCEL or EOF arrives."""


class _CallRequest:
    """What a binding awaits without asyncio: the driver makes the call."""

    def __init__(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.name, self.args, self.kwargs = name, args, kwargs

    def __await__(self) -> Any:
        return (yield self)


class SyncGuest:
    """Runs a program that does not import asyncio: the coroutine is driven by
    hand, and each binding call blocks on fd 3 until its RESULT (calls are
    sequential without asyncio anyway)."""

    def __init__(self, channel: Channel, limits: RunLimits, output: OutputChannel) -> None:
        self.channel = channel
        self.limits = limits
        self.output = output
        self._next_id = 0

    def make_binding(self, name: str) -> Any:
        async def binding(*args: Any, **kwargs: Any) -> Any:
            return await _CallRequest(name, args, kwargs)

        binding.__name__ = binding.__qualname__ = name
        return binding

    def main(self, code: Any, namespace: dict[str, Any]) -> Any:
        try:
            coroutine = eval(code, namespace)  # top-level await: a coroutine, or None
            return None if coroutine is None else self._drive(coroutine)
        except ProgramReturn as ret:
            return ret.value

    def _drive(self, coroutine: Any) -> Any:
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                request = coroutine.send(value) if error is None else coroutine.throw(error)
            except StopIteration as stop:
                return stop.value
            value, error = None, None
            if not isinstance(request, _CallRequest):
                error = RuntimeError("the program awaited something other than a binding "
                                     "call: import asyncio to use asyncio")
                continue
            try:
                value = self._call(request)
            except BaseException as exc:  # raised into the program at its await
                error = exc

    def _call(self, request: _CallRequest) -> Any:
        wire_args, wire_kwargs = wire_arguments(request.name, request.args, request.kwargs,
                                                self.limits)
        self._next_id += 1
        self.output.flush()
        self.channel.send(Call(id=self._next_id, name=request.name, args=wire_args,
                               kwargs=wire_kwargs))
        try:
            event = self.channel.receive_blocking()
        except ProtocolError as exc:  # the host broke the protocol: not the program's error
            self.channel.fail(exc)
        if isinstance(event, Cancel) or event is CONNECTION_CLOSED:
            raise ProgramCancelled  # R-CANCEL-1, R-TRANS-4
        if not isinstance(event, Result) or event.id != self._next_id:
            self.channel.fail(ProtocolError(ErrorCode.UNEXPECTED_MESSAGE, repr(event)[:100]))
        if event.error is not None:
            raise BindingError(request.name, event.error.type, event.error.message,
                               int(event.error.code))
        return event.value


def imports_asyncio(code: CodeType) -> bool:
    """Whether the compiled program (or a function in it) names asyncio, as
    ``import asyncio`` does; a mere variable of that name only costs the
    faster path."""
    return any(n == "asyncio" or n.startswith("asyncio.") for n in code.co_names) or any(
        isinstance(const, CodeType) and imports_asyncio(const) for const in code.co_consts)


def run_program(channel: Channel, run: Run, loop: Any = None) -> None:
    """Run the program and send its DONE (R-DONE-1)."""
    output = OutputChannel(channel, run.limits)
    sys.stdout = ProgramStream(output, Stream.STDOUT)
    sys.stderr = ProgramStream(output, Stream.STDERR)
    namespace: dict[str, Any] = {}
    try:
        code = compile_program(run.source, run.last_expression)
        guest: Any
        # Without asyncio calls are sequential, and blocking on fd 3 is the
        # shortest path for them, warm guest or not.
        if imports_asyncio(code):
            from .aio import AsyncGuest

            guest = AsyncGuest(channel, run.limits, output, loop)
        else:
            guest = SyncGuest(channel, run.limits, output)
        names: dict[str, Any] = {"BindingError": BindingError}
        names.setdefault("help", program_help)
        # A binding hides a guest name or a built-in of the same name (R-RUN-6).
        names.update({b.name: describe_binding(guest.make_binding(b.name), b)
                      for b in run.bindings})
        namespace = program_globals(names, run.variables)
        value = guest.main(code, namespace)
    except BaseException as exc:  # everything the program raises is data
        output.flush()
        if isinstance(exc, ProgramCancelled) or type(exc).__name__ == "CancelledError":
            channel.send(Done(error=ProgramError(type="Cancelled",
                                                 message="the run was cancelled")))
        else:
            _send_done(channel, run, Done(error=fit_error(
                describe(exc), run.limits.value_bytes + ENVELOPE_OVERHEAD)), namespace)
        return
    output.flush()
    try:
        wire, plain = to_wire_plain(value, run.limits.max_depth)
    except ValueModelError as exc:
        _send_done(channel, run, Done(error=ProgramError(
            type="TypeError", message=f"return value {exc}")), namespace)
        return
    payload = encode_payload({"value": wire}, plain=plain)  # once: for the size and to send
    size = len(payload) - DONE_ENVELOPE
    problem = None
    if size > run.limits.value_bytes:
        problem = (f"return value takes {size} bytes, over the limit of "
                   f"{run.limits.value_bytes} (value_bytes)")
    elif exceeds_value_items(payload, run.limits.value_bytes, 2):
        problem = (f"return value holds more than {value_items(run.limits.value_bytes)} "
                   f"values (value_bytes / 16)")
    if problem is not None:
        _send_done(channel, run, Done(error=ProgramError(
            type="ValueError", message=problem, code=ErrorCode.VALUE_TOO_LARGE)), namespace)
        return
    if run.variables is None:
        channel.send(Done(value=wire), payload)
        return
    _send_done(channel, run, Done(value=wire), namespace, len(payload))


def _send_done(channel: Channel, run: Run, done: Done, namespace: dict[str, Any],
               size: int | None = None) -> None:
    """DONE, with the program's variables when RUN asked for them (R-VARS-3).
    ``size``: of DONE's payload without them, when known."""
    if run.variables is None:
        channel.send(done)
        return
    if size is None:
        size = len(encode_payload(done.to_wire()))
    limits = run.limits
    assert limits.variables_bytes is not None  # with variables (R-VARS-1)
    budget = min(limits.variables_bytes, limits.frame_bytes - ENVELOPE_OVERHEAD - size)
    excluded = {b.name for b in run.bindings} | {"BindingError"}
    if not namespace:  # the program did not compile: its globals are RUN's variables
        namespace = dict(run.variables)
    variables, dropped = collect_variables(top_level_names(namespace, excluded), budget,
                                           limits.max_depth)
    channel.send(Done(value=done.value, error=done.error, variables=variables, dropped=dropped))


def collect_variables(names: list[tuple[str, Any]], budget: int, max_depth: int
                      ) -> tuple[dict[str, Value], dict[str, str]]:
    """The names that fit the value model and ``budget`` bytes (encoded
    ``variables`` and ``dropped`` together), and why each other one is left
    out (R-VARS-4, R-VARS-5)."""
    variables: dict[str, Value] = {}
    dropped: dict[str, str] = {}
    items_left = value_items(budget)
    reasons: list[tuple[str, str]] = []
    for name, value in names:
        if variable_name_problem(name) is not None:
            reasons.append((name, f"the name {variable_name_problem(name)}"))
            continue
        if _surely_over(value, budget, items_left):  # not converted: it could take long
            reasons.append((name, f"$: is over what is left of variables_bytes "
                                  f"({max(budget, 0)} bytes, {items_left} values)"))
            continue
        try:
            wire, plain = to_wire_plain(value, max_depth)
        except ValueModelError as exc:
            reasons.append((name, str(exc)))
            continue
        except Exception as exc:  # converting it ran the value's own code, which failed
            reasons.append((name, f"$: cannot be converted: {type(exc).__name__}: {exc}"))
            continue
        encoded = encode_payload({name: wire}, plain=plain)
        items = count_items(encoded, items_left)
        if len(encoded) > budget or items - 2 > items_left:
            reasons.append((name, f"$: takes {len(encoded)} bytes, over what is left of "
                                  f"variables_bytes ({max(budget, 0)})"))
            continue
        variables[name] = wire
        budget -= len(encoded)
        items_left -= items - 1
    for name, reason in reasons:  # after the values: the values matter more
        cost = len(encode_payload({name: reason}))
        if cost <= budget and items_left >= 2:  # its name and its reason
            dropped[name] = reason
            budget -= cost
            items_left -= 2
    return variables, dropped


def _surely_over(value: Any, budget: int, items: int) -> bool:
    """Whether ``value`` holds more than ``items`` items or more than
    ``budget`` bytes of text, looking at no more than that many items."""
    stack = [value]
    try:
        while stack:
            item = stack.pop()
            items -= 1
            if items < 0:
                return True
            if isinstance(item, str | bytes | bytearray):
                budget -= len(item)
                if budget < 0:
                    return True
            elif isinstance(item, dict):
                stack.extend(item.values())
                items -= len(item)
            elif isinstance(item, list | tuple):
                stack.extend(item)
    except Exception:  # the value's own code failed: the conversion will say so
        return False
    return False


class _Rehearsal:
    """Stands in for :class:`Channel` in :func:`rehearse`: the other end is an
    in-memory host that answers every call with its first argument."""

    def __init__(self) -> None:
        self.conn = Connection(Role.GUEST)
        self.host = Connection(Role.HOST)
        self.seen: list[Any] = []  # what the host received

    def send(self, message: Any, payload: bytes | None = None) -> None:
        self.host.receive_data(self.conn.send(message, payload))
        while (event := self.host.next_event()) is not NEED_DATA:
            self.seen.append(event)
            if isinstance(event, Call):
                self.conn.receive_data(self.host.send(Result(id=event.id, value=event.args[0])))

    def receive_blocking(self) -> Any:
        return self.conn.next_event()  # what the host said is already here

    def fail(self, exc: ProtocolError) -> NoReturn:
        raise exc


_REHEARSAL = "x = await f(1)\nprint('x', x)\nreturn [x, {'a': 1.5, 'b': None}]"


def rehearse() -> list[Any]:
    """Take a fixed program through a run's whole path (RUN decoded, compiled,
    a binding called, output and DONE encoded) against an in-memory host.
    A forked guest does this before its HELLO: the pages a run writes are
    then copied from the template already (about 60 page faults fewer after
    the RUN; a warm hello ~0.4 ms faster).
    No program code runs, and nothing of it is left for the program to see.
    Returns the messages the host received."""
    channel = _Rehearsal()
    channel.send(Hello(implementation="rehearsal", languages=LANGUAGES))
    limits = RunLimits(output_bytes=1 << 20, value_bytes=1 << 19, frame_bytes=1 << 20,
                       max_depth=64, max_calls_in_flight=1)
    channel.conn.receive_data(channel.host.send(Run(
        source=_REHEARSAL, language=LANGUAGES[0], bindings=(Binding("f"),), limits=limits)))
    stdout, stderr = sys.stdout, sys.stderr
    try:
        run_program(channel, channel.receive_blocking())  # type: ignore[arg-type]
    finally:
        sys.stdout, sys.stderr = stdout, stderr
    return channel.seen


def preload(modules: Sequence[str]) -> None:
    """Import ``modules`` before any run (the fork server's template, a warm
    guest): a program that imports them then finds them loaded. A module
    that fails to import is reported on stderr and left out; the program's
    own import then raises the error where it can see it."""
    import importlib

    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # not ours to fix: the program sees it when it imports
            sys.stderr.write(f"tether: cannot preload {name}: {type(exc).__name__}: {exc}\n")


#: RUN's resource limits and the rlimit each sets (R-RUN-4).
RLIMITS = (("memory_bytes", "RLIMIT_AS"), ("cpu_seconds", "RLIMIT_CPU"),
           ("open_files", "RLIMIT_NOFILE"), ("file_bytes", "RLIMIT_FSIZE"),
           ("processes", "RLIMIT_NPROC"))


def limit_self(limits: RunLimits) -> None:
    """Over stdio the host may be on another machine and cannot set the
    run's rlimits from outside: the guest lowers its own (never raising a
    limit already set; the container's limits hold besides)."""
    import resource

    for field, name in RLIMITS:
        value = getattr(limits, field)
        if value is None:
            continue
        _, hard = resource.getrlimit(getattr(resource, name))
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(getattr(resource, name), (value, value))


def main(cwd: str | None, warm: bool = False, stdio: bool = False) -> None:
    """``warm``: the guest waits in a pool, so it loads asyncio and makes its
    event loop before RUN; a cold guest loads them only for a program that
    imports asyncio (the only programs that run on the loop). ``stdio``: the
    frames travel on fds 0 and 1 instead of fd 3 (spec §3.1)."""
    if cwd is not None:
        os.chdir(cwd)
    channel = Channel.stdio() if stdio else Channel()
    real_stdout, real_stderr = sys.stdout, sys.stderr
    try:
        channel.send(Hello(
            implementation=f"tether-python/{__version__} {sys.implementation.name}/"
                           f"{'.'.join(map(str, sys.version_info[:3]))}",
            languages=LANGUAGES,
        ))
        loop = None
        if warm:  # while the host has nothing for us yet
            from .aio import new_loop

            loop = new_loop()
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
        if stdio:
            limit_self(run.limits)
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
