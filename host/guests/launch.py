"""A started guest process: how it starts (spawned, under a profile), the
run's limits applied to it (rlimits, cgroup ceilings), its cgroup, its
statistics (CPU time, memory), the kill of its whole tree and the release
of what it holds.

Every way of obtaining a guest produces a :class:`GuestProcess`: a new
interpreter (:func:`launch`, :func:`start_guest`), a fork of the CPython
template (host/guests/zygote.py), or a guest a launcher started elsewhere, reached
over a stream (host/guests/remote.py: its :class:`Remote` part says how to end it).
Once its HELLO is expected it travels as a :class:`StartedGuest`, which is
all a Session is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import resource
import select
import signal
import socket
import stat
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.codec import Connection, Hello, Role

from ..aio import threads
from ..aio.reader import STEP_BYTES, between_steps
from ..limits import Limits
from ..sandbox import cgroups, confinement, owners
from ..sandbox.profiles import (
    BWRAP_BLOCK_FD,
    BWRAP_INFO_FD,
    BWRAP_SECCOMP_FD,
    Sandbox,
    bwrap_argv,
)
from .languages import NODE_MIN_DATA, GuestCommand
from .memory import at_memory_limit
from .process import Child, in_thread, open_stat, proc_stat, readable, remove_tree, spawn
from .process_limits import ProcessLimits

logger = logging.getLogger("tether")


class GuestStartError(Exception):
    """A guest could not be started, or did not say HELLO."""


class LimitsNotApplied(GuestStartError):
    """A run's limits could not be set on its guest (a cgroup file or an
    rlimit refused the value): the guest must not run the program."""


class GuestStartTimeout(GuestStartError):
    """A guest's start did not end within its run's timeout: the run times
    out with it."""


#: How long a launcher's own kill (``docker rm -f``, deleting a pod) may take.
REMOTE_STOP_TIMEOUT = 10.0


@dataclass
class Remote:
    """What a guest started by a launcher (host/guests/remote.py) adds: it is not
    the process the host started (that is ``docker``, ``kubectl``, ``ssh``
    or an exec's stream), so the host can neither limit it nor see its
    statistics. ``name`` is shown as the run's sandbox; ``kill`` ends the
    guest the engine's own way, when the launching process outlives the
    end of its stream (``docker rm -f NAME``), and raises where that failed;
    ``release`` runs after every run, however it ended (deleting its pod)."""

    name: str
    kill: Callable[[], Awaitable[None]] | None = None
    release: Callable[[], Awaitable[None]] | None = None


#: A run's work directory: ``tether-run-<its host: host/sandbox/owners.py>-<random>``.
WORKDIR_PREFIX = "tether-run-"
_swept: set[str] = set()  # temporary directories this process has swept


async def new_workdir() -> str:
    """A host directory of a run's own (removed by :meth:`GuestProcess.release`),
    made in one of tether's threads: a mkdir waits while others change the
    same directory. The first in a temporary directory also has those of
    hosts that are gone removed there."""
    where = tempfile.gettempdir()
    if where not in _swept:
        _swept.add(where)
        threads.internal.submit(sweep_workdirs, where)
    made = asyncio.get_running_loop().run_in_executor(
        threads.internal, functools.partial(tempfile.mkdtemp,
                                            prefix=f"{WORKDIR_PREFIX}{owners.owner()}-"))
    try:
        return await asyncio.shield(made)
    except OSError as exc:  # out of descriptors, or of disk
        raise GuestStartError(str(exc)) from exc
    except asyncio.CancelledError:  # the directory is made, or not, before the caller goes
        await asyncio.wait([made])
        if not made.cancelled() and made.exception() is None:
            remove_tree(made.result())
        raise


def sweep_workdirs(where: str) -> int:
    """Remove the run directories in ``where`` whose host is gone (it was
    killed with SIGKILL; host/sandbox/owners.py): directories, not links, of this
    user's only. Returns how many."""
    removed = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir(where):
            if not (entry.name.startswith(WORKDIR_PREFIX)
                    and owners.left_by_gone_host(entry.name.removeprefix(WORKDIR_PREFIX))):
                continue
            with contextlib.suppress(OSError):
                found = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(found.st_mode) and found.st_uid == os.geteuid():
                    remove_tree(entry.path)
                    removed += not os.path.lexists(entry.path)
    return removed


@dataclass
class GuestProcess:
    """A started guest: its process, the pid that runs the guest itself (inside
    bwrap, not bwrap), and the run's cgroup if there is one."""

    child: Child
    guest_pid: int
    cgroup: cgroups.RunCgroup | None = None
    sandboxed: bool = False
    #: The PID namespace's init, held by a pidfd (it is not our child, and
    #: bwrap --new-session puts it outside bwrap's process group).
    init_pidfd: int = -1
    #: Forked by the template (host/guests/zygote.py): under namespaces ``guest_pid``
    #: is the guest itself, which is also its PID namespace's init.
    forked: bool = False
    #: Started by a launcher elsewhere, reached over a stream.
    remote: Remote | None = None
    #: The launcher's kill ran and ended (True: it succeeded): it runs once
    #: more when the guest is released. None: it did not run, or it hung.
    _killed: bool | None = field(default=None, repr=False)
    _cgroup_ceilings: tuple[int | None, int | None] | None = field(default=None, repr=False)
    #: The guest's /proc stat, opened with its limits (process.open_stat).
    _stat_fd: int = field(default=-1, repr=False)
    #: The program's pid, as found when its stat was opened.
    _stat_pid: int = field(default=0, repr=False)

    def kill(self) -> None:
        """SIGKILL to everything at once: bwrap's group and, by killing its
        init, the whole PID namespace, or every process in the run's cgroup
        (a setsid()-ed escapee included). A remote guest is out of reach of
        signals: its stream ends (EOF stops its program, R-TRANS-4) and
        :meth:`terminate` does the rest."""
        if self.remote is not None:
            self._end_stream()
            return
        namespace_killed = False
        if self.init_pidfd >= 0:
            try:
                signal.pidfd_send_signal(self.init_pidfd, signal.SIGKILL)
                namespace_killed = True
            except ProcessLookupError:  # the init is gone, so is every process it outlived
                namespace_killed = True
            except OSError:
                pass
        if not (self.forked and namespace_killed):  # a forked guest's group is its init's
            self.child.signal_group(signal.SIGKILL)
        if self.cgroup is not None:
            if not self.sandboxed:
                self.cgroup.signal_members()
            self.cgroup.hurry()  # the host waits for them to die

    async def stop(self, grace: float, *, said: asyncio.Future[None] | None) -> None:
        """SIGTERM the guest (as :meth:`terminate` does), up to ``grace`` for
        it to exit or to have ``said`` its last words, then SIGKILL to
        everything (at once when there is nothing to hear: ``said`` None).
        Returns without waiting for the processes to die: under
        load that takes the dying processes' own CPU time, and nothing of
        the run can happen after SIGKILL (:meth:`terminate` with ``kill_now``
        reaps them). Not for a remote guest, whose kill is its launcher's."""
        assert self.remote is None
        if not (self.child.exited.done() or said is None or said.done()):
            if self.init_pidfd >= 0:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(self.program_pid(), signal.SIGTERM)
            else:
                self.child.signal_group(signal.SIGTERM)
            gone = [asyncio.ensure_future(readable(self.init_pidfd))] \
                if self.init_pidfd >= 0 else []
            ends: list[asyncio.Future[Any]] = [self.child.exited, said, *gone]
            try:
                await asyncio.wait(ends, timeout=grace, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiting in gone:
                    waiting.cancel()
        self.kill()
        self.child.drain_pipes()

    async def terminate(self, grace: float, *, kill_now: bool = False) -> int:
        """SIGTERM (the group, and the guest inside bwrap), ``grace``, then
        SIGKILL to everything; reap bwrap or the guest. Returns its status.
        A remote guest: its stream ends, the launching process has ``grace``
        to exit, then the launcher's own kill runs and the launching
        process's group is killed (R-STDIO-6)."""
        if self.remote is not None:
            return await self._terminate_remote(grace)
        if self.init_pidfd >= 0:
            if not kill_now and not self.child.exited.done():
                # The guest alone: bwrap would die of it at once and take the
                # guest with it before its last DONE (R-CANCEL-4).
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(self.program_pid(), signal.SIGTERM)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self.child.exited), grace)
            self.kill()
            # The namespace's init exits only once every process in it has:
            # when its pidfd turns readable, nothing of the run is left.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(readable(self.init_pidfd), 5.0)
        return await self.child.terminate(grace, kill_now=kill_now)

    async def _terminate_remote(self, grace: float) -> int:
        assert self.remote is not None
        self._end_stream()
        if not self.child.exited.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.child.exited), grace)
        if not self.child.exited.done() and self.remote.kill is not None:
            # The launching process may be creating the guest, or removing
            # it (``podman run --rm`` after its container exited), where the
            # kill cannot see it; killed then, it leaves the guest behind.
            # So :meth:`release` runs the kill again once it is gone.
            self._killed = await bounded(self.remote.kill, quiet=True)
        return await self.child.terminate(grace, kill_now=True)

    def _end_stream(self) -> None:
        with contextlib.suppress(OSError):
            self.child.channel.shutdown(socket.SHUT_WR)

    def _close(self) -> None:
        """Every host-side descriptor of the guest (after terminate; the
        cgroup is :meth:`release`'s)."""
        if self.init_pidfd >= 0:
            self.kill()  # no-op after terminate; the guarantee if it never ran
            os.close(self.init_pidfd)
            self.init_pidfd = -1
        self.child.close()
        if self._stat_fd >= 0:
            os.close(self._stat_fd)
            self._stat_fd = -1

    async def release(self, workdir: str | None = None) -> None:
        """Every host-side resource of the guest (after terminate), the cgroup
        and ``workdir`` removed in a worker thread: both block (a cgroup's
        rmdir retries while a dying process leaves it), and the event loop
        serves other runs meanwhile."""
        cgroup, self.cgroup = self.cgroup, None
        self._close()
        if self.remote is not None:  # a stream's own end (its pumps, its socket)
            await bounded(self.child.closed)
        if self._killed is not None:  # set by _terminate_remote, which had a kill
            assert self.remote is not None and self.remote.kill is not None
            # After a kill that worked, finding nothing left is the rule.
            quiet, self._killed = self._killed, None
            await bounded(self.remote.kill, quiet=quiet)
        if self.remote is not None and self.remote.release is not None:
            release, self.remote.release = self.remote.release, None
            await bounded(release)

        def remove() -> None:
            if cgroup is not None:
                cgroup.remove()
            if workdir is not None:
                remove_tree(workdir)

        if cgroup is not None or workdir is not None:
            await in_thread(remove)

    def guest_status(self, code: int) -> int:
        """The guest's exit status from the reaped process's: bwrap exits
        128+N when the process it ran died of signal N."""
        return 128 - code if self.sandboxed and code > 128 else code

    @property
    def profile(self) -> Sandbox:
        return Sandbox.NAMESPACES if self.sandboxed else Sandbox.PROCESS

    @property
    def sandbox_name(self) -> str:
        """What the run's statistics name as its sandbox."""
        return self.remote.name if self.remote is not None else str(self.profile)

    def cpu_seconds(self) -> float | None:
        """CPU time the guest has used (None for a remote one: the local
        process is only its launcher)."""
        if self.remote is not None:
            return None
        return cpu_seconds(self.program_pid() if self._stat_fd < 0 else self.guest_pid,
                           self._stat_fd)

    def memory_use(self, *, peak: bool) -> int | None:
        """See :func:`memory_use` (None for a remote guest)."""
        return None if self.remote is not None else memory_use(self.program_pid(), peak=peak)

    def program_pid(self) -> int:
        """The process that runs the guest. Under bwrap, ``guest_pid`` is the
        PID namespace's init and the guest is its (only) child."""
        if not self.sandboxed or self.forked:
            return self.guest_pid
        with contextlib.suppress(OSError, ValueError, IndexError):
            return _first_child(self.guest_pid)
        return self.guest_pid

    def _live_program_pid(self) -> int:
        """:meth:`program_pid` without looking it up again (a read of /proc
        on the run's path) while the process found then lives: its stat,
        opened then, still reads."""
        if self.sandboxed and not self.forked and self._stat_fd >= 0:
            with contextlib.suppress(OSError):
                os.pread(self._stat_fd, 1, 0)
                return self._stat_pid
        return self.program_pid()

    def adopt_forked(self) -> None:
        """For a guest forked by the template, after its HELLO (it surely runs
        by then): under namespaces, find the guest, the one child of the
        namespaces' init; then give it a cgroup of its own (its processes
        stay in it)."""
        if self.sandboxed:
            self.guest_pid = _first_child(self.child.pid)
        self.cgroup = _cgroup_for(self.guest_pid)

    def apply_limits(self, limits: ProcessLimits, *, ahead: bool = False) -> None:
        """The one place a local guest's limits are applied: rlimits on the
        guest (its processes inherit them) and the cgroup's ceilings, a
        run's between its HELLO and its RUN. ``ahead``: the guest waits in a
        pool for a run whose limits are not known yet: only the cgroup's
        ceilings are set (the host writes them again for a run whose limits
        differ); its rlimits are left as it started with them, because a
        hard limit lowered ahead could not be raised for a run that needs
        more. A remote guest sets RUN's rlimits on itself (R-STDIO-5), and
        its engine's limits hold besides. Raises LimitsNotApplied where a
        limit cannot be set: none is ever left as an earlier run (or the
        pool) had it."""
        if self.remote is not None:
            return
        if self._stat_fd < 0:  # where the run's CPU time is read at its end
            self._stat_pid = self.program_pid()
            self._stat_fd = open_stat(self._stat_pid)
        if not ahead:  # once: a guest serves one run
            apply_rlimits(self._live_program_pid(), limits)
        ceilings = (limits.memory_bytes, limits.processes)
        if self.cgroup is not None and self._cgroup_ceilings != ceilings:
            self._cgroup_ceilings = None
            try:
                self.cgroup.set_limits(memory_bytes=limits.memory_bytes,
                                       processes=limits.processes)
            except cgroups.LimitNotSet as exc:
                raise LimitsNotApplied(f"its cgroup refused the limits: {exc}") from exc
            self._cgroup_ceilings = ceilings

    def at_memory_limit(self, limit: int | None, language: str) -> bool:
        """Whether the host sees the guest at its memory ``limit``: the
        guest's own out-of-memory error is only its claim."""
        if limit is None:
            return False
        if self.cgroup is not None and at_memory_limit(
                limit, language, ceiling_reached=self.cgroup.ceiling_reached(),
                peak=self.cgroup.peak_memory(), used=None):
            return True
        # The rlimit the allocation ran into, if the guest is still there to
        # ask: address space (Python) or data (Node).
        used = self.memory_use(peak=language == "python")
        return at_memory_limit(limit, language, ceiling_reached=False, peak=None, used=used)


async def launch(command: GuestCommand, workdir: str, profile: Sandbox,
                 raw_output_bytes: int, *, disk_bytes: int | None = None,
                 template: bool = False) -> GuestProcess:
    """Start ``command`` under ``profile`` (already resolved); under
    namespaces its writable mounts hold at most ``disk_bytes`` each.
    ``template``: it is the CPython template (host/guests/zygote.py), whose group
    gets a template's CPU weight and whose channel keeps its messages apart
    (SOCK_SEQPACKET). Raises GuestStartError where the host cannot start a
    process (out of processes or descriptors)."""
    try:
        return await _launch(command, workdir, profile, raw_output_bytes,
                             disk_bytes=disk_bytes, template=template)
    except OSError as exc:
        raise GuestStartError(str(exc)) from exc


async def _launch(command: GuestCommand, workdir: str, profile: Sandbox,
                  raw_output_bytes: int, *, disk_bytes: int | None,
                  template: bool) -> GuestProcess:
    channel_type = socket.SOCK_SEQPACKET if template else socket.SOCK_STREAM
    if profile is Sandbox.PROCESS:
        argv = confinement.process_argv(command.argv, workdir, command.seccomp,
                                        landlock=command.landlock,
                                        confines_itself=command.confines_itself,
                                        read=command.binds)
        child = spawn(argv, command.env, raw_output_bytes=raw_output_bytes,
                      channel_type=channel_type)
        _lower_priority(os.PRIO_PGRP, child.pid)  # every thread it has (its own group)
        guest = GuestProcess(child, child.pid)
        # The guest forks nothing before RUN, so joining now covers the program.
        await _off_loop(guest, lambda guest: _join_cgroup(guest, template))
        return guest
    info_r, info_w = os.pipe()
    block_r, block_w = os.pipe()
    extra_fds = [(info_w, BWRAP_INFO_FD), (block_r, BWRAP_BLOCK_FD)]
    if command.seccomp:
        extra_fds.append((_filter_fd(command.seccomp), BWRAP_SECCOMP_FD))
    try:
        child = spawn(bwrap_argv(command.argv, command.env, workdir, disk_bytes=disk_bytes,
                                 binds=command.binds, seccomp=bool(command.seccomp)), {},
                      raw_output_bytes=raw_output_bytes, extra_fds=extra_fds,
                      channel_type=channel_type)
    except BaseException:
        for fd in (info_r, block_w):
            os.close(fd)
        raise
    finally:
        for fd, _ in extra_fds:
            os.close(fd)
    guest = GuestProcess(child, child.pid, sandboxed=True)
    try:
        # bwrap reports the sandboxed process's pid, then waits on block_fd:
        # it joins the cgroup before it runs a single instruction of the guest.
        await _off_loop(guest, lambda guest: _enter_sandbox(guest, info_r, template))
    finally:
        os.close(info_r)
        with contextlib.suppress(OSError):
            os.write(block_w, b"go")
        os.close(block_w)
    return guest


#: Guests run at this nice value (their descendants too, and a program
#: cannot raise it again); a forked guest inherits it from its template.
#: What keeps the host's share of the CPU is the runs' cpu cgroups
#: (host/sandbox/cgroups.py): a guest calls setsid(), and under the kernel's
#: autogroups a session weighs as much as the host whatever its nice value.
GUEST_NICE = 10


def _lower_priority(which: int, who: int) -> None:
    with contextlib.suppress(OSError):
        os.setpriority(which, who, GUEST_NICE)


def _filter_fd(bpf: bytes) -> int:
    """A descriptor bwrap reads the filter from: a pipe holding all of it
    (a filter is far smaller than a pipe's buffer)."""
    read, write = os.pipe()
    try:
        os.write(write, bpf)
    finally:
        os.close(write)
    return read


async def _off_loop(guest: GuestProcess, work: Callable[[GuestProcess], None]) -> None:
    """``work(guest)`` in a thread; if that fails or is cancelled, kill and
    release everything started so far."""
    try:
        await in_thread(work, guest)
    except BaseException:
        guest.kill()
        guest.child.signal_group(signal.SIGKILL)
        await guest.release()
        raise


def _join_cgroup(guest: GuestProcess, template: bool) -> None:
    with contextlib.suppress(OSError):
        guest.cgroup = _cgroup_for(guest.child.pid, template=template)


def _enter_sandbox(guest: GuestProcess, info_fd: int, template: bool) -> None:
    _lower_priority(os.PRIO_PGRP, guest.child.pid)
    try:
        info = _read_info(info_fd)
        guest.guest_pid = int(str(info["child-pid"]))
        # The sandbox's init, before it forks the guest: all of the run inherits it.
        _lower_priority(os.PRIO_PROCESS, guest.guest_pid)
        guest.init_pidfd = os.pidfd_open(guest.guest_pid)
        guest.cgroup = _cgroup_for(guest.child.pid, guest.guest_pid, template=template)
    except (OSError, ValueError, KeyError, TimeoutError):
        pass  # bwrap failed to start: its exit and stderr tell why


def _first_child(pid: int) -> int:
    return int(Path(f"/proc/{pid}/task/{pid}/children").read_text().split()[0])


def _cgroup_for(*pids: int, template: bool = False) -> cgroups.RunCgroup | None:
    if cgroups.available().version is None:
        return None
    return cgroups.RunCgroup.holding(*pids, template=template)


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int, fd: int = -1) -> float | None:
    """CPU time (user + system) ``pid`` and the children it reaped have used
    (read through ``fd``, :func:`~.process.open_stat`, when it is open)."""
    fields = proc_stat(pid, fd)
    if fields is None:
        return None
    return sum(int(f) for f in fields[11:15]) / _CLOCK_TICKS


def memory_use(pid: int, *, peak: bool) -> int | None:
    """``pid``'s peak address space (``peak``) or its data segment now, as
    RLIMIT_AS and RLIMIT_DATA count them."""
    field = b"VmPeak:" if peak else b"VmData:"
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(field):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


async def bounded(work: Callable[[], Awaitable[None]], *, quiet: bool = False) -> bool | None:
    """A launcher's kill or release: at most REMOTE_STOP_TIMEOUT, and its
    failure is logged, never raised (the run has its result already);
    ``quiet``: a failure is only information. Returns whether it succeeded,
    None when it ran out of time (the engine itself is stuck)."""
    try:
        async with asyncio.timeout(REMOTE_STOP_TIMEOUT):
            await work()
    except TimeoutError:
        logger.warning("tether: a launcher's cleanup took over %g s", REMOTE_STOP_TIMEOUT)
        return None
    except Exception as exc:
        logger.log(logging.INFO if quiet else logging.WARNING,
                   "tether: a launcher's cleanup failed: %s", str(exc) or repr(exc))
        return False
    return True


def _read_info(fd: int) -> dict[str, object]:
    """Read bwrap's --info-fd until it holds one whole JSON object (2 s at most)."""
    data = b""
    deadline = time.monotonic() + 2.0
    while True:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise TimeoutError("bwrap wrote no sandbox info")
        chunk = os.read(fd, 4096)
        if not chunk:
            raise ValueError("bwrap closed its info fd without writing")
        data += chunk
        with contextlib.suppress(ValueError):
            parsed = json.loads(data)
            if isinstance(parsed, dict):
                return parsed


def apply_rlimits(pid: int, limits: ProcessLimits) -> None:
    """Set the guest's rlimits from outside (prlimit), between its HELLO and
    the RUN, so no program code runs unlimited even in a guest that cannot
    limit itself. Each soft and hard limit becomes the given one
    (RLIMIT_CPU's hard one a second later: SIGXCPU, then SIGKILL), so the
    program cannot raise a soft limit past it; at most the guest's hard
    limit as it started (the host's own: nothing lowers a guest's rlimits
    before its run, GuestProcess.apply_limits). Node hangs instead of
    failing below ~40 MiB of data, hence a floor for RLIMIT_DATA."""
    memory = limits.memory_bytes
    if memory is not None and not limits.address_space:
        memory = max(memory, NODE_MIN_DATA)
    wanted = {
        resource.RLIMIT_CPU: limits.cpu_seconds,
        resource.RLIMIT_NOFILE: limits.open_files,
        resource.RLIMIT_FSIZE: limits.file_bytes,
        resource.RLIMIT_AS if limits.address_space else resource.RLIMIT_DATA: memory,
    }
    for which, value in wanted.items():
        if value is None:
            continue
        hard = value + 1 if which == resource.RLIMIT_CPU else value
        try:
            current = resource.prlimit(pid, which)[1]
            if current != resource.RLIM_INFINITY:
                hard = min(hard, current)
            resource.prlimit(pid, which, (min(value, hard), hard))
        except ProcessLookupError:
            return  # the guest is gone: its run ends as it ended
        except (OSError, ValueError) as exc:
            raise LimitsNotApplied(f"its rlimit {which} = {value} could not be set: "
                                   f"{exc}") from exc


@dataclass
class StartedGuest:
    """A started guest and its connection, ready for one run. ``hello`` is
    its HELLO when it has arrived already (a warm guest), else the run
    reads it. ``workdir`` is the host directory to remove after the run
    (None when the run's files live only in its own mount namespace).
    ``since``: the loop time its start began, when the run waited for it.
    ``deadline``: the loop time the run's timeout ends, when the run waited
    for this guest's HELLO before it began (a cold guest's HELLO counts in
    its timeout, wherever it is read)."""

    process: GuestProcess
    workdir: str | None
    conn: Connection
    hello: Hello | None = None
    since: float | None = None
    deadline: float | None = None

    @property
    def child(self) -> Child:
        return self.process.child


async def start_guest(command_for: Callable[[str], GuestCommand], profile: Sandbox,
                      limits: Limits) -> StartedGuest:
    """A new interpreter for one run, in a work directory of its own; the
    run reads its HELLO (its start counts in the run's wall time)."""
    since = asyncio.get_running_loop().time()
    workdir = await new_workdir()
    try:
        process = await launch(command_for(workdir), workdir, profile,
                               limits.raw_output_bytes, disk_bytes=limits.disk_bytes)
    except BaseException:
        remove_tree(workdir)
        raise
    return StartedGuest(process, workdir, run_connection(limits), since=since)


def run_connection(limits: Limits) -> Connection:
    """The host's connection for a run under ``limits``."""
    return Connection(Role.HOST, step_bytes=STEP_BYTES, between_steps=between_steps,
                      max_frame_bytes=limits.frame_bytes, max_depth=limits.max_depth)
