"""Guests a launcher starts somewhere else, reached over a stream: a
command whose stdin and stdout carry the frames (spec §3.1) —
``docker run -i``, ``kubectl exec -i``, ``ssh`` — or any byte stream a
launcher holds (a Kubernetes exec: tether.integrations.kubernetes).

A launcher hands the host the same started-guest handle a local start does
(host/guests/launch.py): a :class:`GuestProcess` whose ``child.channel`` carries
the frames, with a :class:`Remote` part saying how to end it. The host
cannot limit such a guest from outside: the guest sets RUN's rlimits on
itself (R-STDIO-5) and its engine holds it to its own limits. What stays
the host's: the wall-clock timeout, the limits on the frames, ending the
stream, ending the launching process, and the launcher's own kill.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import logging
import os
import shutil
import signal
import socket
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tether.codec import Connection, Role

from ..aio.reader import STEP_BYTES, between_steps
from ..limits import Limits
from .launch import GuestProcess, GuestStartError, Remote, bounded
from .process import CappedBuffer, Child, spawn

__all__ = ["CommandLauncher", "Launcher", "SkipsPreamble", "Stream", "StreamChild", "command_line",
           "guest_name_for", "over_stream"]

logger = logging.getLogger("tether")

#: The longest preamble skipped before a guest's first frame (R-STDIO-2).
MAX_PREAMBLE = 64 * 1024
#: Magic, version 1, type HELLO: where a guest's first frame starts.
HELLO_START = b"TH\x01\x01"


class Launcher(abc.ABC):
    """How a :class:`~tether.Runtime` starts its guests somewhere else
    (``Runtime(launcher=...)``; without one, guests are local children under
    the Runtime's sandbox profile). Each call of :meth:`start` is one fresh
    guest for one run: a launcher never hands out a guest, container or pod
    that has served a run. ``name`` is what ``RunStats.sandbox`` shows."""

    name: str = "remote"

    @abc.abstractmethod
    async def start(self, language: str, limits: Limits, *, warm: bool) -> GuestProcess:
        """Start a guest for ``language`` whose frames ride the returned
        process's ``child.channel`` (its HELLO still to come). ``warm``: it
        will wait in the pool before its run. Raise :class:`GuestStartError`
        (or OSError) when it cannot start; release anything made so far,
        also when cancelled: the start counts in a cold run's timeout, and a
        warm guest's in the pool's START_TIMEOUT (host/guests/pool.py)."""

    async def aclose(self) -> None:  # noqa: B027 - most launchers hold nothing
        """The Runtime is closing: let go of what the launcher holds."""


class CommandLauncher(Launcher):
    """Each guest is a command whose stdin and stdout carry the frames::

        CommandLauncher(["docker", "run", "-i", "--rm", "--name", "{name}", IMAGE,
                         "python", "-m", "tether.guest", "--stdio",
                         "--language", "{language}"],
                        kill=["docker", "rm", "-f", "{name}"])

    In ``argv`` and ``kill``, ``{name}`` becomes a name of the guest's own
    (``tether-`` and 12 hex digits: name the container with it) and
    ``{language}`` the run's language (``typescript`` runs on the
    ``javascript`` guest too). ``argv[0]`` is looked up on the ``PATH`` of
    ``env``, the command's environment (default: the host's own, so that
    ``docker``, ``kubectl`` or ``ssh`` find their configuration; the
    command is trusted, the program it starts is not), with
    ``TETHER_TRANSPORT=stdio`` added (R-STDIO-4). ``kill`` ends the guest
    the engine's way when the command has not exited within the run's
    ``kill_grace`` after its stream ended; the command's process group is
    killed after it, and ``kill`` runs once more once the group is gone:
    the command may have been creating its guest, or removing it itself
    (``--rm``), where the first kill could not see it, and killing the
    command then leaves the guest behind (R-STDIO-6)."""

    def __init__(self, argv: Sequence[str], *, kill: Sequence[str] | None = None,
                 env: Mapping[str, str] | None = None, name: str = "command") -> None:
        if isinstance(argv, str) or not argv or not all(isinstance(a, str) for a in argv):
            raise TypeError("argv must be a non-empty sequence of str (a command line)")
        if kill is not None and (isinstance(kill, str) or not kill
                                 or not all(isinstance(a, str) for a in kill)):
            raise TypeError("kill must be None or a non-empty sequence of str")
        self.argv = tuple(argv)
        self.kill = None if kill is None else tuple(kill)
        self.env = dict(os.environ if env is None else env)
        self.name = name

    async def start(self, language: str, limits: Limits, *, warm: bool) -> GuestProcess:
        guest_name = guest_name_for()
        argv = command_line(self.argv, guest_name, language)
        env = {**self.env, "TETHER_TRANSPORT": "stdio"}
        path = shutil.which(argv[0], path=env.get("PATH", os.defpath))
        if path is None:
            raise GuestStartError(f"the guest's command {argv[0]!r} is not on PATH")
        child = spawn([path, *argv[1:]], env, raw_output_bytes=limits.raw_output_bytes,
                      stdio=True)
        kill = None
        if self.kill is not None:
            kill_argv = command_line(self.kill, guest_name, language)

            async def kill() -> None:
                await run_command(kill_argv, env)

        return GuestProcess(child, child.pid, remote=Remote(self.name, kill=kill))


def guest_name_for() -> str:
    """A name of a guest's own, for its container or pod: ``tether-`` and
    12 hex digits (a valid DNS label)."""
    return f"tether-{os.urandom(6).hex()}"


def command_line(argv: Sequence[str], name: str, language: str) -> list[str]:
    """``argv`` with ``{name}`` and ``{language}`` filled in (TypeScript
    runs on the JavaScript guest)."""
    language = "javascript" if language == "typescript" else language
    return [a.replace("{name}", name).replace("{language}", language) for a in argv]


async def run_command(argv: Sequence[str], env: Mapping[str, str]) -> None:
    """Run a launcher's own command (a kill, a cleanup) to its end.

    Raises:
        CommandFailed: it exited non-zero (with what it wrote to stderr).
    """
    process = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE, env=dict(env), start_new_session=True)
    try:
        _, stderr = await process.communicate()
    except BaseException:  # cancelled, or out of time: nothing of it may run on
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        raise
    if process.returncode:
        raise CommandFailed(f"{argv[0]} exited {process.returncode}: "
                            f"{stderr.decode(errors='replace').strip()[-500:]}")


class CommandFailed(Exception):
    """A launcher's own command exited non-zero."""


class SkipsPreamble(Connection):
    """The host's connection to a guest over a stream: bytes before its
    first frame (a container runtime's banner, a shell's message of the day)
    are skipped, logged and kept as ``raw`` output, up to MAX_PREAMBLE; a
    longer one reaches the decoder, which rejects it as FRAME_MALFORMED
    (R-STDIO-2). After the first frame every byte is the decoder's
    (R-STDIO-3)."""

    def __init__(self, raw: CappedBuffer, **options: Any) -> None:
        super().__init__(Role.HOST, **options)
        self._raw = raw
        self._scanned: bytearray | None = bytearray()

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        scanned = self._scanned
        if scanned is None:
            super().receive_data(data)
            return
        start = max(0, len(scanned) - len(HELLO_START) + 1)
        scanned += data
        found = scanned.find(HELLO_START, start)
        if found < 0 and len(scanned) < MAX_PREAMBLE + len(HELLO_START):
            return
        if found < 0 or found > MAX_PREAMBLE:
            found = 0  # not a preamble: the decoder says what is wrong
        self._scanned = None
        self._skipped(scanned[:found])
        super().receive_data(bytes(scanned[found:]))

    def receive_eof(self) -> None:
        if self._scanned is not None:
            self._skipped(self._scanned)
            self._scanned = None
        super().receive_eof()

    def _skipped(self, preamble: bytearray) -> None:
        if preamble:
            logger.info("tether: skipped %d bytes before the guest's first frame: %r",
                        len(preamble), bytes(preamble[:200]))
            self._raw.add(bytes(preamble))


def remote_connection(guest: GuestProcess, limits: Limits | None = None) -> SkipsPreamble:
    """The connection a run on ``guest`` reads (``limits``: for a run
    waiting on it cold; a warm guest's RUN sets them)."""
    options: dict[str, Any] = {"step_bytes": STEP_BYTES, "between_steps": between_steps}
    if limits is not None:
        options.update(max_frame_bytes=limits.frame_bytes, max_depth=limits.max_depth)
    return SkipsPreamble(guest.child.raw_stdout, **options)


@dataclass
class StreamChild(Child):
    """A guest behind a byte stream that is no local process (an exec over
    a WebSocket): ``exited`` resolves when the stream's far end reports the
    guest's exit (or the stream breaks). No local process group exists, so
    a signal ends the stream: ``end`` starts that (once; later calls return
    the same task) and returns the task that closes it."""

    end: Callable[[], asyncio.Task[None]] = field(kw_only=True, repr=False)

    def signal_group(self, signum: int) -> None:
        self.end()

    async def _until_group_dead(self, grace: float) -> None:
        pass

    def _reap(self) -> int:
        if not self._reaped:
            self._reaped = True
            self.returncode = self.exited.result() if self.exited.done() else -9
        assert self.returncode is not None
        return self.returncode

    def close(self) -> None:
        self.end()
        super().close()

    async def closed(self) -> None:
        await asyncio.shield(self.end())  # a cancelled wait leaves the stream's close running


#: Bytes moved from the host's socket to a stream at a time.
_PUMP_BYTES = 64 * 1024


@dataclass(frozen=True)
class Stream:
    """A byte stream to a guest, as :func:`over_stream` uses it:
    ``receive`` (``b""`` at its end), ``send``, ``close_send`` (EOF to the
    guest), ``close`` (end it all), and once it has ended the guest's
    ``exit_code`` (None: unknown) and what it wrote to ``stderr``."""

    receive: Callable[[], Awaitable[bytes]]
    send: Callable[[bytes], Awaitable[None]]
    close_send: Callable[[], Awaitable[None]]
    close: Callable[[], Awaitable[None]]
    exit_code: Callable[[], int | None]
    stderr: Callable[[], bytes]


def over_stream(stream: Stream, *, raw_output_bytes: int) -> StreamChild:
    """A :class:`StreamChild` whose channel is one end of a socket pair,
    the other end pumped to and from ``stream``; ``exited`` resolves once
    the stream ends. Call from the event loop."""
    loop = asyncio.get_running_loop()
    host_end, pump_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    host_end.setblocking(False)
    pump_end.setblocking(False)
    exited: asyncio.Future[int] = loop.create_future()
    tasks: list[asyncio.Task[None]] = []
    raw_stderr = CappedBuffer(raw_output_bytes)
    closing: list[asyncio.Task[None]] = []

    async def inbound() -> None:  # the stream to the host
        try:
            while data := await stream.receive():
                await loop.sock_sendall(pump_end, data)
        except OSError:
            pass
        except Exception as exc:  # the stream's peer broke its own protocol
            logger.info("tether: the guest's stream failed: %r", exc)
        with contextlib.suppress(OSError):
            pump_end.shutdown(socket.SHUT_WR)
        raw_stderr.add(stream.stderr())
        if not exited.done():
            code = stream.exit_code()
            exited.set_result(-9 if code is None else code)

    async def outbound() -> None:  # the host to the stream
        with contextlib.suppress(OSError, ConnectionError):
            while data := await loop.sock_recv(pump_end, _PUMP_BYTES):
                await stream.send(data)
            await stream.close_send()

    async def close() -> None:
        try:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            # A stream whose close hangs (a peer that never answers the
            # closing handshake) cannot keep its pump's socket open.
            await bounded(stream.close, quiet=True)
        finally:
            pump_end.close()

    def end() -> asyncio.Task[None]:
        if not exited.done():
            exited.set_result(-9)
        if not closing:
            closing.append(loop.create_task(close()))
        return closing[0]

    child = StreamChild(pid=0, channel=host_end, raw_stdout=CappedBuffer(raw_output_bytes),
                        raw_stderr=raw_stderr, exited=exited, end=end)
    tasks += [loop.create_task(inbound()), loop.create_task(outbound())]
    return child
