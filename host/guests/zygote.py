"""The CPython fork server, host side: one template process per runtime and
sandbox profile forks each Python guest (guest/python/zygote.py; the
messages between them are codec/forkserver.py).

A forked guest costs a few milliseconds instead of a whole interpreter start
(tens of milliseconds, under bwrap more), and it is still a fresh process
that has never run a program. The template is started like a guest of its
profile; under ``namespaces`` every forked guest also enters namespaces of
its own (see the guest side), and joins its own cgroup before its RUN.

Trade-off: guests forked from one template share its address-space layout
(ASLR is per template, not per run) and its hash seed.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import socket
from collections.abc import Callable
from pathlib import Path

from tether.codec.forkserver import (
    EXITED,
    FAILED,
    FORKED,
    LOST,
    decode_reply,
    encode_request,
)

from ..aio.channel import channel_pair
from ..limits import Limits
from ..sandbox.profiles import Sandbox
from .languages import GuestCommand
from .launch import GuestProcess, launch, new_workdir
from .process import adopt, remove_tree

#: Bytes of the template's own stdout/stderr kept (its start-up errors).
_TEMPLATE_OUTPUT = 64 * 1024
#: The size of the template's own writable mounts (each run's are its own).
_TEMPLATE_DISK = Limits().disk_bytes
#: Fork requests sent and not yet answered, at most; more wait their turn
#: in the host. The template reads one at a time, and its control socket
#: (SOCK_SEQPACKET) queues only ``net.unix.max_dgram_qlen`` messages (10 by
#: default) before a send fails: a burst of runs would otherwise read that
#: as forking failing here and start new interpreters instead.
FORKS_IN_FLIGHT = 8


class ZygoteError(Exception):
    """The template could not start or fork; the caller starts the guest cold."""


class TemplateStopped(ZygoteError):
    """The template was stopped (closed, or let go when idle) with the fork
    still to come: it says nothing of whether forking works here."""


class Zygote:
    def __init__(self, command_for: Callable[[str, str], GuestCommand], profile: Sandbox) -> None:
        """``command_for(workdir, mode)``: the template's command line."""
        self._command_for = command_for
        self._profile = profile
        self._isolate = profile is Sandbox.NAMESPACES
        self._launched: GuestProcess | None = None
        self._workdir: str | None = None
        self._lock = asyncio.Lock()  # one start or stop at a time
        self._forks: dict[int, asyncio.Future[int]] = {}
        self._exits: dict[int, asyncio.Future[int]] = {}
        self._next_token = 0
        self._in_flight = asyncio.Semaphore(FORKS_IN_FLIGHT)
        self._stopping: asyncio.Task[None] | None = None
        self._closed = False  # for good: no fork starts it again
        self._last_stderr = ""

    def stderr(self) -> str:
        """What the template (or the last one) wrote to stderr: why it failed."""
        if self._launched is None:
            return self._last_stderr
        self._launched.child.drain_pipes()
        return self._launched.child.raw_stderr.text()

    @property
    def alive(self) -> bool:
        return self._launched is not None and not self._launched.child.exited.done()

    async def _ensure_started(self) -> GuestProcess:
        if self._stopping is not None:
            await asyncio.shield(self._stopping)
        async with self._lock:
            if self._closed:  # a fork that waited its turn past the close
                raise TemplateStopped("the template was closed")
            if self._launched is not None and not self.alive:
                await self._stop()  # it died: start a new one
            if self._launched is None:
                try:
                    await self._start()
                except BaseException as exc:
                    await self._stop()
                    if isinstance(exc, asyncio.CancelledError):
                        raise
                    raise ZygoteError(f"the template did not start: {exc!r}") from exc
            assert self._launched is not None
            return self._launched

    async def _start(self) -> None:
        self._workdir = await new_workdir()
        command = self._command_for(self._workdir, "namespaces" if self._isolate else "process")
        self._launched = await launch(command, self._workdir, self._profile, _TEMPLATE_OUTPUT,
                                      disk_bytes=_TEMPLATE_DISK, template=True)
        control = self._launched.child.channel
        asyncio.get_running_loop().add_reader(control.fileno(), self._on_reply)

    def _on_reply(self) -> None:
        assert self._launched is not None
        control = self._launched.child.channel
        while True:
            try:
                message, fds, _, _ = socket.recv_fds(control, 64, 1)
            except BlockingIOError:
                return
            except OSError:
                message, fds = b"", []
            reply = decode_reply(message)
            if reply is None:  # EOF (the template died) or garbage
                for fd in fds:
                    os.close(fd)
                self._lost()
                return
            kind, token, value = reply
            forked = self._forks.pop(token, None) if kind in (FORKED, FAILED) else None
            if kind == FORKED and forked is not None and not forked.done():
                if fds:
                    forked.set_result(fds.pop())
                else:  # the kernel dropped it: the host had no descriptor left
                    forked.set_exception(OSError(
                        errno.EMFILE, "the forked guest's pidfd did not arrive"))
            elif kind == FAILED and forked is not None and not forked.done():
                forked.set_exception(ZygoteError(f"fork failed: {os.strerror(value)}"))
            elif kind == EXITED and token in self._exits:
                future = self._exits[token]
                if not future.done():
                    future.set_result(value)
            for fd in fds:  # a pidfd nobody waits for any more
                os.close(fd)

    def _lost(self) -> None:
        """The template is gone, and with it (bwrap's PID namespace, or
        PDEATHSIG) every guest it forked."""
        assert self._launched is not None
        with contextlib.suppress(ValueError, OSError):
            asyncio.get_running_loop().remove_reader(self._launched.child.channel.fileno())
        for future in self._forks.values():
            if not future.done():
                future.set_exception(ZygoteError("the template exited"))
        self._forks.clear()
        for future in self._exits.values():
            if not future.done():
                future.set_result(LOST)
        self._launched.kill()

    async def fork(self, workdir: str | None, raw_output_bytes: int,
                   disk_bytes: int | None, *, rehearse: bool = True,
                   heap: bool = False) -> GuestProcess:
        """A new guest: forked, not yet said HELLO. ``workdir`` is the host
        directory of a ``process``-profile run; under ``namespaces`` the run
        gets a private tmpfs at the template's work directory instead, and
        private tmpfs mounts of at most ``disk_bytes`` are all it can write.
        ``rehearse``: the guest takes a run's path once before its HELLO,
        which makes it quicker to a RUN that comes later and slower to its
        HELLO (for a guest that will wait, not one a run waits for);
        ``heap``: it also makes its heap ready for a large value (for a
        guest that will wait long)."""
        async with self._in_flight:  # its descriptors too are made once it is its turn
            return await self._fork(workdir, raw_output_bytes, disk_bytes, rehearse, heap)

    async def _fork(self, workdir: str | None, raw_output_bytes: int,
                    disk_bytes: int | None, rehearse: bool, heap: bool) -> GuestProcess:
        launched = await self._ensure_started()
        self._next_token = (self._next_token + 1) & 0xFFFFFFFF
        token = self._next_token
        loop = asyncio.get_running_loop()
        host_end, guest_end = channel_pair()
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        err_r, err_w = os.pipe2(os.O_CLOEXEC)
        forked: asyncio.Future[int] = loop.create_future()
        exited: asyncio.Future[int] = loop.create_future()
        self._forks[token] = forked
        self._exits[token] = exited
        try:
            request = encode_request(token, disk_bytes, workdir or self._workdir or "",
                                     rehearse=rehearse, heap=heap)
            socket.send_fds(launched.child.channel, [request],
                            [guest_end.fileno(), out_w, err_w])
        except OSError as exc:
            self._forks.pop(token, None)
            self._exits.pop(token, None)
            for fd in (out_r, err_r):
                os.close(fd)
            host_end.close()
            raise ZygoteError(f"cannot reach the template: {exc}") from exc
        finally:
            guest_end.close()
            os.close(out_w)
            os.close(err_w)
        pidfd = -1
        try:
            try:
                pidfd = await forked
            finally:
                if pidfd < 0 and forked.done() and not forked.cancelled() \
                        and forked.exception() is None:
                    pidfd = forked.result()  # it came, but this task was cancelled
            pid = _pid_of(pidfd)
        except BaseException:
            self._forks.pop(token, None)  # a later reply's pidfd is closed on arrival
            self._exits.pop(token, None)
            for fd in (out_r, err_r, pidfd):
                if fd >= 0:
                    os.close(fd)
            host_end.close()
            raise
        if not self._isolate:
            os.close(pidfd)  # a process-profile guest dies with its group
            pidfd = -1

        exited.add_done_callback(lambda _: self._exits.pop(token, None))
        child = adopt(pid, host_end, (out_r, err_r), raw_output_bytes=raw_output_bytes,
                      exited=exited, namespace_init=self._isolate)
        return GuestProcess(child, pid, sandboxed=self._isolate, forked=True, init_pidfd=pidfd)

    def stop_when_unused(self) -> None:
        """Stop the template unless a guest it forked is still running (under
        namespaces, its guests live in its PID namespace); it starts again
        at the next fork."""
        if not self._forks and not self._exits and self._launched is not None and (
                self._stopping is None or self._stopping.done()):
            self._stopping = asyncio.get_running_loop().create_task(self._stop_locked())

    async def aclose(self) -> None:
        """Stop the template for good (the Runtime closes)."""
        self._closed = True
        await self._stop_locked()

    async def _stop_locked(self) -> None:
        async with self._lock:
            await self._stop()

    async def _stop(self) -> None:
        self._last_stderr = self.stderr().strip()
        launched, self._launched = self._launched, None
        if launched is not None:
            with contextlib.suppress(ValueError, OSError):
                asyncio.get_running_loop().remove_reader(launched.child.channel.fileno())
            for future in self._forks.values():
                if not future.done():
                    future.set_exception(TemplateStopped("the template was stopped"))
            self._forks.clear()
        workdir, self._workdir = self._workdir, None
        if launched is None:
            if workdir is not None:
                remove_tree(workdir)
            return
        try:
            await launched.terminate(0.1, kill_now=True)
            for future in self._exits.values():
                if not future.done():
                    future.set_result(LOST)
        finally:  # cancelled or not: what the template held is released
            await launched.release(workdir)


def _pid_of(pidfd: int) -> int:
    """The pid (as the host sees it) of the process a pidfd refers to; -1
    there means the process has already been reaped."""
    for line in Path(f"/proc/self/fdinfo/{pidfd}").read_text().splitlines():
        if line.startswith("Pid:"):
            pid = int(line.split()[1])
            if pid <= 1:
                raise ZygoteError("the forked guest exited before the host heard of it")
            return pid
    raise ZygoteError("the template sent a descriptor that is not a pidfd")
