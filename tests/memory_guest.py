"""The in-memory guest: the CPython guest's own shim, run on a thread of the
host's process over a socket pair, behind the launcher interface
(``Runtime(launcher=MemoryLauncher())``). No child process is started.
A test harness, not a module of the package: the host meets the guests
only in the codec, and here the two share a process.

It is for tests of the engine (the protocol, binding calls, events,
approvals, checkpoints, variables, results), not of the sandbox: the program
runs in the host's process, with the host's rights and files, and nothing
limits its memory or CPU. Never give it a program you do not trust.

The guest is the real one from RUN to DONE (``guest/python/shim.py``'s
``run_program``: the program compiled and driven, its calls, output and
DONE encoded by the guest's codec); what differs is what a process gives
its only program and a thread cannot:

- programs run one at a time in the process: the shim points ``sys.stdout``
  and ``sys.stderr`` at the run for as long as it lasts (what the host
  prints meanwhile becomes the program's output). Warm guests wait for
  their RUN side by side; concurrent runs take turns, so a program that
  waits on another run waits until its own run's timeout;
- it runs as a rehearsal does, not as a script: no ``atexit`` handlers, no
  join of its threads, no capture of fds 1 and 2, no rlimits and no signal
  handlers (a SIGTERM would reach the host);
- stopping it: the end of its stream, then an exception raised into its
  thread (``GuestStopped``) where it computes; a program blocked in a
  system call (``time.sleep``) keeps its thread until the call returns.
  Timeouts, kills, limits and crashes are for real guests;
- the program compiles on its thread while the host's own code runs: on
  CPython 3.11 the AST constructor's recursion counter is shared by threads,
  and a compile that meets another thread's may fail with "SystemError:
  AST constructor recursion depth mismatch" (seen once in ~700 runs); the
  compile is then made once more.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any, NoReturn

from tether import __version__
from tether.codec import (
    CONNECTION_CLOSED,
    Done,
    Error,
    ErrorCode,
    Hello,
    Payload,
    ProtocolError,
    Run,
)
from tether.guest.python import interrupt, shim
from tether.guest.python.aio import new_loop
from tether.guest.python.channel import Channel
from tether.host.aio.channel import channel_pair
from tether.host.guests.launch import GuestProcess, GuestStartError, Remote
from tether.host.guests.process import CappedBuffer
from tether.host.guests.remote import Launcher, StreamChild
from tether.host.limits import Limits

__all__ = ["GuestStopped", "MemoryLauncher"]

_compile_program = shim.__dict__["compile_program"]


def _compile_again_on_a_depth_mismatch(*args: Any, **kwargs: Any) -> Any:
    """The shim's compile, once more where another thread's compile threw
    3.11's shared AST depth count off (see the module's docstring): a
    thread's artefact, never the program's."""
    try:
        return _compile_program(*args, **kwargs)
    except SystemError as exc:
        if "recursion depth mismatch" not in str(exc):
            raise
        return _compile_program(*args, **kwargs)


setattr(shim, "compile_program", _compile_again_on_a_depth_mismatch)  # noqa: B010 - the shim's own name

logger = logging.getLogger("tether")

#: One program at a time in the process: the shim points sys.stdout at its run.
_ONE_PROGRAM = threading.Lock()
#: How long the end of a stopped guest's thread is waited for.
STOP_WAIT = 5.0


class GuestStopped(BaseException):
    """Raised into an in-memory guest's thread where its program computes,
    when the host ends the run (what SIGKILL is to a guest process)."""


class MemoryLauncher(Launcher):
    """Starts each guest as a thread of this process running the CPython
    guest's shim (see the module's docstring: for tests of the engine; no
    isolation). Python only."""

    name = "memory"

    async def start(self, language: str, limits: Limits, *, warm: bool) -> GuestProcess:
        if language != "python":
            raise GuestStartError(f"the in-memory guest runs Python, not {language!r}")
        loop = asyncio.get_running_loop()
        host_end, guest_end = channel_pair()  # as a local guest's
        host_end.setblocking(False)
        exited: asyncio.Future[int] = loop.create_future()
        guest = _Thread(guest_end, lambda code: _report(loop, exited, code))
        closing: list[asyncio.Task[None]] = []

        def end() -> asyncio.Task[None]:
            if not closing:
                with contextlib.suppress(OSError):
                    host_end.shutdown(socket.SHUT_RDWR)  # its reads end, its writes fail
                guest.stop()
                if not exited.done():
                    exited.set_result(-9)
                closing.append(loop.create_task(guest.ended()))
            return closing[0]

        child = StreamChild(pid=0, channel=host_end,
                            raw_stdout=CappedBuffer(limits.raw_output_bytes),
                            raw_stderr=CappedBuffer(limits.raw_output_bytes),
                            exited=exited, end=end)
        guest.start()
        return GuestProcess(child, 0, remote=Remote(self.name))


def _report(loop: asyncio.AbstractEventLoop, exited: asyncio.Future[int], code: int) -> None:
    """From the guest's thread: its exit status, to the host's loop."""
    def report() -> None:
        if not exited.done():
            exited.set_result(code)

    with contextlib.suppress(RuntimeError):  # the loop is closed: no one waits any more
        loop.call_soon_threadsafe(report)


class _Left(BaseException):
    """The guest left after a connection error (a process would exit)."""


class _MemoryChannel(Channel):
    """The guest's channel on its end of the socket pair; a connection
    error ends the guest's thread instead of the process. ``streams``: the
    host's own sys.stdout and sys.stderr while a program runs, given back
    before its DONE goes out (the host reads its result once DONE is in)."""

    streams: tuple[Any, Any, Any, Any] | None = None
    _giving_back = threading.Lock()

    def send(self, message: object, payload: Payload | None = None) -> None:
        if isinstance(message, Done):
            self.give_back_streams()
        super().send(message, payload)

    def give_back_streams(self) -> None:
        """Once, from the guest's thread at DONE or the host's when it stops
        the guest: what the program prints after that is the host's."""
        with self._giving_back:
            if self.streams is not None:
                (sys.stdout, sys.stderr, sys.__stdout__,  # type: ignore[misc]
                 sys.__stderr__) = self.streams
                self.streams = None

    def fail(self, exc: ProtocolError) -> NoReturn:
        with contextlib.suppress(OSError, ProtocolError):
            self.send(Error(exc.code, exc.message))
        raise _Left


class _Thread:
    """One guest's thread, and how the host stops it."""

    def __init__(self, sock: socket.socket, exited: Callable[[int], None]) -> None:
        self._channel = _MemoryChannel(sock.fileno(), sock.fileno())
        sock.detach()  # the channel's socket owns the descriptor now
        self._exited = exited
        self._lock = threading.Lock()
        self._running = False  # the program runs: a stop is raised into it
        self._stopped = False
        self._thread = threading.Thread(target=self._main, name="tether-memory-guest",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """From the host: end the guest (its stream has ended already)."""
        with self._lock:
            self._stopped = True
            self._channel.give_back_streams()
            if self._running and self._thread.ident is not None:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(self._thread.ident), ctypes.py_object(GuestStopped))

    async def ended(self) -> None:
        """Until the thread has ended (STOP_WAIT at most: a program blocked
        in a system call keeps it)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STOP_WAIT
        while self._thread.is_alive() and loop.time() < deadline:
            await asyncio.sleep(0.005)
        if self._thread.is_alive():
            logger.warning("tether: an in-memory guest's thread is still running its program")

    def _main(self) -> None:
        code = 1
        try:
            code = self._serve()
        except (_Left, OSError, GuestStopped):
            pass
        finally:
            with self._lock:
                self._running = False
            self._channel.sock.close()  # type: ignore[union-attr]
            self._exited(code)

    def _serve(self) -> int:
        """What the guest's main does, in a thread: HELLO, RUN, the program, DONE."""
        channel = self._channel
        channel.send(Hello(implementation=f"tether-python-memory/{__version__}",
                           languages=shim.LANGUAGES))
        try:
            run = channel.receive_blocking()
            if run is CONNECTION_CLOSED:
                return 0
            if not isinstance(run, Run):
                raise ProtocolError(ErrorCode.UNEXPECTED_MESSAGE, f"expected RUN, got {run!r}")
            if run.language not in shim.LANGUAGES:
                raise ProtocolError(ErrorCode.LANGUAGE_UNSUPPORTED,
                                    f"cannot run {run.language!r}")
        except ProtocolError as exc:
            channel.fail(exc)
        with _ONE_PROGRAM:
            with self._lock:
                if self._stopped:
                    return 1
                self._running = True
            self._run(run)
        return 0

    def _run(self, run: Run) -> None:
        interrupt.reset()  # what the last program's run read (its CANCEL, its end)
        self._channel.streams = sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__
        loop = new_loop()
        try:
            shim.run_program(self._channel, run, loop, last=False)
        finally:
            with self._lock:
                self._running = False
            self._channel.give_back_streams()
            asyncio.set_event_loop(None)
            loop.close()
