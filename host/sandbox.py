"""Isolation profiles (see docs/security.md).

``process``: the guest runs as a child process in its own session and
process group, with an empty environment, a private work directory and
rlimits. Fast, but not a boundary: the program can read what the host user
can read, open sockets, and a descendant that calls ``setsid()`` escapes the
group kill.

``namespaces``: the guest runs under bubblewrap in new user, PID, network,
IPC, UTS and cgroup namespaces, as an unprivileged uid, with a read-only view
of only the system directories, the interpreter and the guest shim, a
private writable work directory, a minimal /dev and /proc, no capabilities
and no network; killing bwrap ends the PID namespace and so every process in
it. Where cgroups are writable each run also gets a memory ceiling and a
process count for the whole tree.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import cbor2

import tether
from tether.codec import RunLimits

from . import cgroups, confinement
from .guests import GuestCommand, apply_rlimits
from .limits import Limits
from .process import Child, in_thread, remove_tree, spawn

#: Where the bwrap binary is looked for (Debian package ``bubblewrap``).
BWRAP_PATHS = ("/usr/bin/bwrap", "/usr/local/bin/bwrap")
#: The uid/gid the program runs as inside the user namespace.
SANDBOX_ID = 65534


class Sandbox(enum.StrEnum):
    """The isolation profile of a run (see the security model)."""

    PROCESS = "process"  #: a child process with limits, and no security boundary
    NAMESPACES = "namespaces"  #: bubblewrap, with user, PID, network... namespaces
    AUTO = "auto"  #: namespaces where available, else process with a warning


class SandboxUnavailable(RuntimeError):
    """The requested isolation cannot be had on this machine."""


@dataclass(frozen=True, slots=True)
class Support:
    bwrap: str | None
    namespaces: bool
    detail: str
    cgroups: cgroups.CgroupSupport


@cache
def detect() -> Support:
    """What isolation this machine offers (probed once per process)."""
    bwrap = next((p for p in BWRAP_PATHS if os.access(p, os.X_OK)), None)
    if bwrap is None:
        return Support(None, False, "bwrap is not installed (Debian: apt-get install "
                       "bubblewrap)", cgroups.available())
    probe = subprocess.run(
        [bwrap, "--unshare-all", "--die-with-parent", "--uid", str(SANDBOX_ID),
         "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
         "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
         "--", "/usr/bin/true"],
        capture_output=True, text=True, timeout=10, check=False, env={})
    if probe.returncode != 0:
        return Support(bwrap, False, f"bwrap cannot create namespaces here: "
                       f"{probe.stderr.strip()}", cgroups.available())
    return Support(bwrap, True, "bwrap with user, PID and network namespaces",
                   cgroups.available())


def resolve(choice: Sandbox | str) -> Sandbox:
    """The profile runs will use; raises or warns when namespaces are missing."""
    choice = Sandbox(choice)
    if choice is Sandbox.PROCESS:
        _warn_if_root()
        return choice
    support = detect()
    if support.namespaces:
        return Sandbox.NAMESPACES
    if choice is Sandbox.NAMESPACES:
        raise SandboxUnavailable(f"sandbox='namespaces' is not available: {support.detail}")
    warnings.warn(f"tether: namespaces unavailable ({support.detail}); programs run with "
                  f"sandbox='process', which is not a security boundary",
                  RuntimeWarning, stacklevel=3)
    _warn_if_root()
    return Sandbox.PROCESS


def _warn_if_root() -> None:
    if os.geteuid() != 0:
        return
    if confinement.landlock_version() >= 6:
        warnings.warn("tether: sandbox='process' as root runs programs as root: Landlock "
                      "confines their files, signals and abstract sockets, but every other "
                      "privilege of root stays theirs; use sandbox='namespaces'",
                      RuntimeWarning, stacklevel=4)
    else:
        warnings.warn("tether: sandbox='process' as root runs programs as root: a program "
                      "can signal or kill any process on the machine (os.kill(-1, 9)), as "
                      "this kernel has no Landlock signal scoping (ABI 6); use "
                      "sandbox='namespaces'", RuntimeWarning, stacklevel=4)


@cache
def _guest_binds() -> tuple[str, ...]:
    """Host paths a guest needs, bound read-only at the same place inside:
    the interpreters' prefixes and tether's and cbor2's package directories
    (with the targets of tether's symlinked subpackages)."""
    paths = {sys.base_prefix, str(Path(cbor2.__file__).resolve().parent)}
    package = Path(tether.__file__).parent
    paths.add(str(package))
    for sub in ("codec", "guest"):
        paths.add(str((package / sub).resolve()))
    node = shutil.which("node")
    if node is not None:
        paths.add(str(Path(node).resolve().parent.parent))
    return tuple(sorted(p for p in paths if not p.startswith("/usr/")))


def bwrap_argv(argv: tuple[str, ...], env: dict[str, str], workdir: str,
               info_fd: int, block_fd: int, *, disk_bytes: int | None,
               seccomp_fd: int | None = None,
               binds: tuple[str, ...] = ()) -> tuple[str, ...]:
    """``argv`` wrapped in bwrap. The guest keeps the same paths inside, so
    nothing in its command line changes. The only writable places are
    private tmpfs mounts of at most ``disk_bytes`` each (the work directory,
    /tmp, /dev/shm): the root, /dev and every bind are read-only, so nothing
    a program writes reaches the host's disk or outlives the sandbox.
    ``seccomp_fd``: bwrap reads a BPF filter from it and installs it just
    before it execs the guest. ``binds``: more host paths to bind read-only
    (third-party packages)."""
    support = detect()
    assert support.bwrap is not None
    size = [] if disk_bytes is None else ["--size", str(disk_bytes)]
    out = [support.bwrap,
           "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
           "--uid", str(SANDBOX_ID), "--gid", str(SANDBOX_ID),
           "--ro-bind", "/usr", "/usr",
           "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
           "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
           "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache",
           "--ro-bind-try", "/etc/localtime", "/etc/localtime",
           "--proc", "/proc", "--dev", "/dev",
           *size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
           *size, "--tmpfs", "/tmp",
           "--info-fd", str(info_fd), "--block-fd", str(block_fd),
           "--clearenv"]
    for path in (*_guest_binds(), *binds):
        out += ["--ro-bind", path, path]
    out += [*size, "--tmpfs", workdir, "--chdir", workdir]
    for key, value in env.items():
        out += ["--setenv", key, value]
    if seccomp_fd is not None:
        out += ["--seccomp", str(seccomp_fd)]
    return (*out, "--remount-ro", "/", "--", *argv)


@dataclass
class Launched:
    """A started guest: its process, the pid that runs the guest itself (inside
    bwrap, not bwrap), and the run's cgroup if there is one."""

    child: Child
    guest_pid: int
    cgroup: cgroups.RunCgroup | None = None
    sandboxed: bool = False
    #: The PID namespace's init, held by a pidfd (it is not our child, and
    #: bwrap --new-session puts it outside bwrap's process group).
    init_pidfd: int = -1
    #: Forked by the template (host/zygote.py): under namespaces ``guest_pid``
    #: is the guest itself, which is also its PID namespace's init.
    forked: bool = False
    _cgroup_ceilings: tuple[int | None, int | None] | None = None
    _rlimits: tuple[str, RunLimits] | None = None

    def kill(self) -> None:
        """SIGKILL to everything at once: bwrap's group and, by killing its
        init, the whole PID namespace, or every process in the run's cgroup
        (a setsid()-ed escapee included)."""
        if self.init_pidfd >= 0:
            with contextlib.suppress(ProcessLookupError, OSError):
                signal.pidfd_send_signal(self.init_pidfd, signal.SIGKILL)
        self.child.signal_group(signal.SIGKILL)
        if self.cgroup is not None and not self.sandboxed:
            self.cgroup.signal_members()

    async def terminate(self, grace: float, *, kill_now: bool = False) -> int:
        """SIGTERM (the group, and the guest inside bwrap), ``grace``, then
        SIGKILL to everything; reap bwrap or the guest. Returns its status."""
        if self.init_pidfd >= 0:
            if not kill_now and not self.child.exited.done():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(self.program_pid(), signal.SIGTERM)
                self.child.signal_group(signal.SIGTERM)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self.child.exited), grace)
            self.kill()
            # The namespace's init exits only once every process in it has:
            # when its pidfd turns readable, nothing of the run is left.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_readable(self.init_pidfd), 5.0)
        return await self.child.terminate(grace, kill_now=kill_now)

    def close(self) -> None:
        """Release every host-side resource (after terminate)."""
        if self.init_pidfd >= 0:
            self.kill()  # no-op after terminate; the guarantee if it never ran
            os.close(self.init_pidfd)
            self.init_pidfd = -1
        self.child.close()
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None

    async def release(self, workdir: str | None = None) -> None:
        """:meth:`close`, with the cgroup and ``workdir`` removed in a worker
        thread: both block (a cgroup's rmdir retries while a dying process
        leaves it), and the event loop serves other runs meanwhile."""
        cgroup, self.cgroup = self.cgroup, None
        self.close()

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

    def program_pid(self) -> int:
        """The process that runs the guest. Under bwrap, ``guest_pid`` is the
        PID namespace's init and the guest is its (only) child."""
        if not self.sandboxed or self.forked:
            return self.guest_pid
        path = f"/proc/{self.guest_pid}/task/{self.guest_pid}/children"
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int(Path(path).read_text().split()[0])
        return self.guest_pid

    def apply_limits(self, language: str, limits: Limits) -> None:
        """The run's limits, before its RUN: rlimits on the guest (the
        program's processes inherit them) and the cgroup's ceilings. A warm
        guest's are set while it waits, and only rewritten for a run whose
        limits differ."""
        wanted = (language, limits.wire())
        if self._rlimits != wanted:
            apply_rlimits(self.program_pid(), language, limits)
            self._rlimits = wanted
        ceilings = (limits.memory_bytes, limits.processes)
        if self.cgroup is not None and self._cgroup_ceilings != ceilings:
            with contextlib.suppress(OSError):
                self.cgroup.set_limits(memory_bytes=limits.memory_bytes,
                                       processes=limits.processes)
                self._cgroup_ceilings = ceilings


async def launch(command: GuestCommand, workdir: str, limits: Limits, profile: Sandbox,
                 raw_output_bytes: int, *, channel_type: int = socket.SOCK_STREAM) -> Launched:
    """Start ``command`` under ``profile`` (already resolved)."""
    if profile is Sandbox.PROCESS:
        argv = confinement.process_argv(command.argv, workdir, command.seccomp,
                                        landlock=command.landlock,
                                        confines_itself=command.confines_itself)
        child = spawn(argv, command.env, raw_output_bytes=raw_output_bytes,
                      channel_type=channel_type)
        _lower_priority(os.PRIO_PGRP, child.pid)  # every thread it has (its own group)
        launched = Launched(child, child.pid)
        # The guest forks nothing before RUN, so joining now covers the program.
        await _off_loop(launched, _join_cgroup)
        return launched
    info_r, info_w = os.pipe()
    block_r, block_w = os.pipe()
    extra_fds = [(info_w, 4), (block_r, 5)]
    if command.seccomp:
        extra_fds.append((_filter_fd(command.seccomp), 6))
    try:
        child = spawn(bwrap_argv(command.argv, command.env, workdir, 4, 5,
                                 disk_bytes=limits.disk_bytes, binds=command.binds,
                                 seccomp_fd=6 if command.seccomp else None), {},
                      raw_output_bytes=raw_output_bytes, extra_fds=extra_fds,
                      channel_type=channel_type)
    except BaseException:
        for fd in (info_r, block_w):
            os.close(fd)
        raise
    finally:
        for fd, _ in extra_fds:
            os.close(fd)
    launched = Launched(child, child.pid, sandboxed=True)
    try:
        # bwrap reports the sandboxed process's pid, then waits on block_fd:
        # it joins the cgroup before it runs a single instruction of the guest.
        await _off_loop(launched, lambda launched: _enter_sandbox(launched, info_r))
    finally:
        os.close(info_r)
        with contextlib.suppress(OSError):
            os.write(block_w, b"go")
        os.close(block_w)
    return launched


#: Guests run at this nice value (their descendants too, and a program
#: cannot raise it again): however many processes a program sets competing
#: for the CPU, the host's own work (other runs' timeouts, calls, teardown)
#: keeps its share. A forked guest inherits it from its template.
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


async def _off_loop(launched: Launched, work: Callable[[Launched], None]) -> None:
    """``work(launched)`` in a thread; if that fails or is cancelled, kill and
    release everything started so far."""
    try:
        await in_thread(work, launched)
    except BaseException:
        launched.kill()
        launched.child.signal_group(signal.SIGKILL)
        launched.close()
        raise


def _join_cgroup(launched: Launched) -> None:
    with contextlib.suppress(OSError):
        launched.cgroup = _cgroup_for(launched.child.pid)


def _enter_sandbox(launched: Launched, info_fd: int) -> None:
    _lower_priority(os.PRIO_PGRP, launched.child.pid)
    try:
        info = _read_info(info_fd)
        launched.guest_pid = int(str(info["child-pid"]))
        # The sandbox's init, before it forks the guest: all of the run inherits it.
        _lower_priority(os.PRIO_PROCESS, launched.guest_pid)
        launched.init_pidfd = os.pidfd_open(launched.guest_pid)
        launched.cgroup = _cgroup_for(launched.child.pid, launched.guest_pid)
    except (OSError, ValueError, KeyError, TimeoutError):
        pass  # bwrap failed to start: its exit and stderr tell why


def _cgroup_for(*pids: int) -> cgroups.RunCgroup | None:
    if cgroups.available().version is None:
        return None
    group = cgroups.RunCgroup(f"{pids[0]}-{os.urandom(4).hex()}")
    for pid in pids:
        group.add(pid)
    return group


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system) ``pid`` and the children it reaped have used."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
        try:
            fields = os.read(fd, 4096).rsplit(b")", 1)[1].split()
        finally:
            os.close(fd)
    except (OSError, IndexError):
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


async def _readable(fd: int) -> None:
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    loop.add_reader(fd, ready.set_result, None)
    try:
        await ready
    finally:
        loop.remove_reader(fd)


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
