"""Child processes: spawn with fd 3 wired, watch for exit, kill the group.

The child is started with ``posix_spawn`` in a new session (so its process
group is its own), fd 0 on /dev/null, fds 1 and 2 on pipes, fd 3 on one end
of a socketpair, and nothing else inherited. Its exit is watched through a
pidfd, never through pipe EOF: a descendant may hold the pipes long after
the child is gone (cpython#119710).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import select
import shutil
import signal
import socket
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tether.codec.forkserver import exit_status

from ..aio import threads
from ..aio.channel import channel_pair

#: Descriptors handed to posix_spawn are moved at least this high first, so
#: that dup2 onto 0-3 never meets a source that is already 0-3.
_FD_FLOOR = 10
_DEFAULT_SIGNALS = (
    signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGPIPE,
    signal.SIGXCPU, signal.SIGXFSZ, signal.SIGCHLD,
)

_T = TypeVar("_T")


def _high(fd: int) -> int:
    """A close-on-exec duplicate of ``fd`` numbered >= _FD_FLOOR; closes ``fd``."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, _FD_FLOOR)
    os.close(fd)
    return moved


class CappedBuffer:
    """Keeps the first ``limit`` bytes written to it, counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


@dataclass
class Child:
    """A running guest process and the host's ends of its descriptors."""

    pid: int
    channel: socket.socket  # host end of fd 3, non-blocking
    raw_stdout: CappedBuffer
    raw_stderr: CappedBuffer
    exited: asyncio.Future[int] = field(repr=False)
    _pidfd: int = -1
    _pipes: dict[int, CappedBuffer] = field(default_factory=dict)
    _relay: _StdioRelay | None = None
    _reaped: bool = False
    _closed: bool = False
    returncode: int | None = None

    def signal_group(self, signum: int) -> None:
        """Signal every process in the child's group (the child may be a zombie
        not yet reaped, which keeps the group id from being reused)."""
        if self._reaped or self.pid <= 1:  # killpg(-1) or (0) would reach far beyond the run
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signum)

    async def terminate(self, grace: float, *, kill_now: bool = False) -> int:
        """SIGTERM to the group, up to ``grace`` seconds, SIGKILL to the group;
        then reap. With ``kill_now`` SIGKILL comes first (R-TERM-2)."""
        if self._closed:  # close() killed and reaped it already
            assert self.returncode is not None
            return self.returncode
        if not self.exited.done():
            if not kill_now:
                self.signal_group(signal.SIGTERM)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self.exited), grace)
            self.signal_group(signal.SIGKILL)
            await asyncio.shield(self.exited)
        self.signal_group(signal.SIGKILL)  # stragglers: TERM-ignoring descendants
        code = self._reap()
        await self._until_group_dead(grace)
        return code

    async def _until_group_dead(self, grace: float) -> None:
        await _until_group_dead(self.pid, grace)

    def _reap(self) -> int:
        if not self._reaped:
            _, status = os.waitpid(self.pid, 0)
            self._reaped = True
            self.returncode = os.waitstatus_to_exitcode(status)
        assert self.returncode is not None
        return self.returncode

    async def closed(self) -> None:
        """After :meth:`close`: until what it started has finished (a local
        process leaves nothing running)."""

    def drain_pipes(self) -> None:
        """Read what the raw pipes hold right now, without waiting for EOF."""
        if not self._pipes:
            return
        poll = select.poll()  # one call says which have anything (data, or EOF)
        for fd in self._pipes:
            poll.register(fd, select.POLLIN)
        for fd, _ in poll.poll(0):
            self._read_pipe(fd)

    def _read_pipe(self, fd: int) -> None:
        buffer = self._pipes.get(fd)
        if buffer is None:
            return
        while True:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._close_pipe(fd)
                return
            buffer.add(chunk)

    def _close_pipe(self, fd: int) -> None:
        if self._pipes.pop(fd, None) is not None:
            asyncio.get_running_loop().remove_reader(fd)
            os.close(fd)

    def close(self) -> None:
        """Release every host-side descriptor. Normally called after
        :meth:`terminate`; if that never finished (the caller was cancelled
        twice), the group is killed and reaped here, synchronously."""
        if not self._reaped:
            self.signal_group(signal.SIGKILL)
            self._reap()
        self.drain_pipes()
        for fd in list(self._pipes):
            self._close_pipe(fd)
        if self._pidfd >= 0:
            asyncio.get_running_loop().remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = -1
        if self._relay is not None:
            self._relay.close()
            self._relay = None
        self.channel.close()
        self._closed = True
        if not self.exited.done():  # nothing watches for its exit any more
            assert self.returncode is not None
            self.exited.set_result(self.returncode)


def spawn(
    argv: Sequence[str], env: Mapping[str, str], *, raw_output_bytes: int,
    extra_fds: Sequence[tuple[int, int]] = (), channel_type: int = socket.SOCK_STREAM,
    stdio: bool = False,
) -> Child:
    """Start ``argv`` (argv[0] an absolute path) as a guest; ``extra_fds``
    are (host fd, child fd) pairs to pass besides 0-3. With ``stdio`` the
    frames travel on the child's stdin and stdout instead of fd 3 (spec
    §3.1: a command that carries them elsewhere): two pipes, relayed to the
    channel's socket (a guest may need to reopen them, which a socket
    cannot be), and only fd 2 is a raw pipe. Must be called from a running
    event loop."""
    loop = asyncio.get_running_loop()
    # Through a relay (stdio) the frames leave the channel 64 KiB at a time
    # anyway, and the template's control messages are small.
    host_end, child_end = channel_pair() if channel_type == socket.SOCK_STREAM and not stdio \
        else socket.socketpair(socket.AF_UNIX, channel_type)
    out_r, out_w = os.pipe()  # the child's stdout: raw output, or (stdio) the frames
    err_r, err_w = os.pipe()
    to_child = -1
    if stdio:  # the child's stdin too; child_end is the relay's
        in_r, to_child = os.pipe()
        child_fds = [_high(in_r), _high(out_w), _high(err_w)]
    else:
        child_fds = [_high(os.dup(child_end.fileno())), _high(out_w), _high(err_w)]
        child_end.close()
    extras = [(_high(os.dup(fd)), target) for fd, target in extra_fds]
    child_fds += [fd for fd, _ in extras]
    try:
        pid = os.posix_spawn(
            argv[0],
            list(argv),
            dict(env),
            file_actions=[
                *_stdio_actions(child_fds, stdio),
                *((os.POSIX_SPAWN_DUP2, fd, target) for fd, target in extras),
            ],
            setsid=True,
            setsigmask=(),  # nothing blocked, whatever the host's threads block
            setsigdef=_DEFAULT_SIGNALS,  # nothing ignored that the host ignores
        )
    except BaseException:
        for fd in (out_r, err_r):
            os.close(fd)
        host_end.close()
        if stdio:
            child_end.close()
            os.close(to_child)
        raise
    finally:
        for fd in child_fds:
            os.close(fd)
    child = Child(pid=pid, channel=host_end, raw_stdout=CappedBuffer(raw_output_bytes),
                  raw_stderr=CappedBuffer(raw_output_bytes), exited=loop.create_future())
    child._pidfd = os.pidfd_open(pid)
    loop.add_reader(child._pidfd, _on_exit, child)
    if stdio:
        child._relay = _StdioRelay(child_end, to_child, out_r)
    _watch(child, None if stdio else out_r, err_r)
    return child


def _stdio_actions(child_fds: Sequence[int], stdio: bool) -> list[tuple[Any, ...]]:
    """fds 0-3 of a guest: the channel on fd 3, or the frames' pipes on fds
    0 and 1 (stdio)."""
    first, out_w, err_w = child_fds[:3]
    if stdio:
        return [(os.POSIX_SPAWN_DUP2, first, 0), (os.POSIX_SPAWN_DUP2, out_w, 1),
                (os.POSIX_SPAWN_DUP2, err_w, 2)]
    return [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2),
            (os.POSIX_SPAWN_DUP2, first, 3)]


class _StdioRelay:
    """Copies between the far end of a channel's socket pair and a child's
    stdin and stdout pipes, on the event loop: EOF on either side becomes
    EOF on the other (the socket's SHUT_WR, closing the stdin pipe)."""

    def __init__(self, sock: socket.socket, to_child: int, from_child: int) -> None:
        self._loop = asyncio.get_running_loop()
        self._sock = sock
        self._pipes = [to_child, from_child]
        self._watched: set[tuple[int, bool]] = set()  # (fd, for writing)
        for fd in (sock.fileno(), to_child, from_child):
            os.set_blocking(fd, False)
        self._tasks = [self._loop.create_task(self._copy(from_child, sock.fileno())),
                       self._loop.create_task(self._copy(sock.fileno(), to_child))]

    async def _copy(self, source: int, target: int) -> None:
        try:
            while data := await self._read(source):
                view = memoryview(data)
                while view:
                    try:
                        view = view[os.write(target, view):]
                    except BlockingIOError:
                        await self._ready(target, write=True)
        except OSError:
            pass  # the far side is gone: its exit is noticed elsewhere
        with contextlib.suppress(OSError):
            if target == self._sock.fileno():
                self._sock.shutdown(socket.SHUT_WR)
            elif target in self._pipes:
                self._pipes.remove(target)
                os.close(target)

    async def _read(self, fd: int) -> bytes:
        while True:
            try:
                return os.read(fd, 65536)
            except BlockingIOError:
                await self._ready(fd, write=False)

    async def _ready(self, fd: int, *, write: bool) -> None:
        ready: asyncio.Future[None] = self._loop.create_future()
        add = self._loop.add_writer if write else self._loop.add_reader
        add(fd, wake, ready)
        self._watched.add((fd, write))
        try:
            await ready
        finally:
            self._unwatch(fd, write)

    def _unwatch(self, fd: int, write: bool) -> None:
        # Only while the relay owns ``fd``: once closed, its number may be
        # another descriptor's, whose reader must stay.
        if (fd, write) in self._watched:
            self._watched.discard((fd, write))
            (self._loop.remove_writer if write else self._loop.remove_reader)(fd)

    def close(self) -> None:
        for fd, write in list(self._watched):
            self._unwatch(fd, write)
        for task in self._tasks:
            task.cancel()
        for fd in self._pipes:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._pipes = []
        self._sock.close()


def _watch(child: Child, out_r: int | None, err_r: int) -> None:
    """Collect the raw pipes as they fill; the channel is read by its owner."""
    loop = asyncio.get_running_loop()
    child.channel.setblocking(False)
    for fd, buffer in ((out_r, child.raw_stdout), (err_r, child.raw_stderr)):
        if fd is None:
            continue
        os.set_blocking(fd, False)
        child._pipes[fd] = buffer
        loop.add_reader(fd, child._read_pipe, fd)


@dataclass
class ForkedChild(Child):
    """A guest forked by a template process (host/guests/zygote.py): not our child.
    Its exit status comes from the template (``exited``), never waitpid; the
    template kills its group before it reaps it, so once ``exited`` is done
    the host no longer signals the group (whose id may then be reused).
    ``namespace_init``: the process is its PID namespace's init, whose exit
    means the namespace is empty."""

    namespace_init: bool = False

    def signal_group(self, signum: int) -> None:
        if not self.exited.done():
            super().signal_group(signum)

    async def _until_group_dead(self, grace: float) -> None:
        if not self.namespace_init:
            await super()._until_group_dead(grace)

    def _reap(self) -> int:
        if not self._reaped:
            self._reaped = True
            self.returncode = self.exited.result() if self.exited.done() else -signal.SIGKILL
        assert self.returncode is not None
        return self.returncode


def adopt(pid: int, channel: socket.socket, pipes: tuple[int, int], *, raw_output_bytes: int,
          exited: asyncio.Future[int], namespace_init: bool = False) -> ForkedChild:
    """A :class:`Child` for a guest someone else started: ``pid`` leads its
    process group, ``pipes`` are its raw fd 1 and fd 2, ``exited`` resolves
    with its status."""
    out_r, err_r = pipes
    child = ForkedChild(pid=pid, channel=channel, raw_stdout=CappedBuffer(raw_output_bytes),
                        raw_stderr=CappedBuffer(raw_output_bytes), exited=exited,
                        namespace_init=namespace_init)
    _watch(child, out_r, err_r)
    return child


def _live_members(pgid: int) -> bool:
    """Whether any process of group ``pgid`` is still running (zombies left
    to init do not count). Scans /proc: only called when a group outlives
    its leader."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        fields = proc_stat(int(name))
        if fields is not None and int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


def proc_stat(pid: int, fd: int = -1) -> list[bytes] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (the
    first is the state, field 3 of proc(5)), or None when ``pid`` is gone;
    read through ``fd`` (from :func:`open_stat`) when it is open."""
    try:
        if fd >= 0:
            return os.pread(fd, 4096, 0).rsplit(b")", 1)[1].split()
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
        try:
            return os.read(fd, 4096).rsplit(b")", 1)[1].split()
        finally:
            os.close(fd)
    except (OSError, IndexError):
        return None


def open_stat(pid: int) -> int:
    """A descriptor on ``/proc/<pid>/stat`` (-1 if it cannot be opened): it
    stays on that process, and a read through it needs no path lookup."""
    try:
        return os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return -1


async def _until_group_dead(pgid: int, limit: float) -> None:
    """After SIGKILL to the group: wait (up to ``limit``) until every member
    has died, so a run never returns while a descendant still runs. The
    usual case, an empty group, costs one kill(0)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return
    deadline = asyncio.get_running_loop().time() + limit
    # In a thread: reading a dying process's stat can wait on its exit.
    while await in_thread(_live_members, pgid) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.005)


def _on_exit(child: Child) -> None:
    loop = asyncio.get_running_loop()
    loop.remove_reader(child._pidfd)
    if not child.exited.done():
        # Reaping now would free the group id while descendants may live on;
        # report "exited" and reap in terminate(), after the group is killed.
        status = os.waitid(os.P_PIDFD, child._pidfd, os.WEXITED | os.WNOWAIT | os.WNOHANG)
        child.exited.set_result(0 if status is None else exit_status(status))


def wake(ready: asyncio.Future[None]) -> None:
    """A readiness callback: resolve ``ready`` unless it is done already."""
    if not ready.done():
        ready.set_result(None)


async def readable(fd: int) -> None:
    """Until ``fd`` is readable."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    # wake, not set_result: a wait cut short by its timeout leaves the
    # future done while the readiness may already be queued.
    loop.add_reader(fd, wake, ready)
    try:
        await ready
    finally:
        loop.remove_reader(fd)


async def in_thread(work: Callable[..., _T], *args: Any) -> _T:
    """``work(*args)`` in one of tether's own worker threads (never the
    application's or the bindings'), so that the event loop serves other
    runs meanwhile (joining a cgroup can take milliseconds: cgroup v1 waits
    for an RCU grace period). If the caller is cancelled, the thread is waited
    for before the cancellation goes on: cleanup never races it."""
    job = asyncio.get_running_loop().run_in_executor(threads.internal, work, *args)
    try:
        return await asyncio.shield(job)
    except asyncio.CancelledError:
        await asyncio.wait([job])
        raise


def remove_tree(path: str, *, _opened: set[str] | None = None) -> None:
    """rmtree that also gets through directories the program made unreadable.
    Only directories inside ``path`` are opened up again, and never through
    a symbolic link (a program's link to a file of the host's stays a link)."""
    root = os.path.normpath(path)
    opened = set() if _opened is None else _opened  # walked again once each

    def open_up(directory: str) -> None:
        directory = os.path.normpath(directory)
        inside = directory == root or directory.startswith(root + os.sep)
        if inside and stat.S_ISDIR(os.lstat(directory).st_mode):
            os.chmod(directory, stat.S_IRWXU)

    def retry(function: Any, name: str, exc: Any) -> None:
        error = exc[1] if isinstance(exc, tuple) else exc  # onerror's exc_info, onexc's exception
        with contextlib.suppress(OSError):
            open_up(os.path.dirname(name))
            open_up(name)
        with contextlib.suppress(OSError):
            if function in (os.rmdir, os.unlink):
                function(name)
            elif isinstance(error, PermissionError) and name not in opened and \
                    stat.S_ISDIR(os.lstat(name).st_mode):
                opened.add(name)  # unreadable until just now: what is in it goes too
                remove_tree(name, _opened=opened)
            else:  # it could not even be opened (no descriptors left): if empty, it goes
                os.rmdir(name)

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry)
    else:
        shutil.rmtree(path, onerror=retry)
