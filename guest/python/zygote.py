"""The CPython fork server: a template that has loaded the shim (and asyncio)
but never runs a program; it forks one guest per run.

Started by the host like a guest, with ``--zygote namespaces|process`` (its
sandbox profile); fd 3 is a
SOCK_SEQPACKET control socket whose messages codec/forkserver.py defines.

``namespaces`` (inside the namespaces sandbox): every run gets its own user,
PID, mount, network, IPC and UTS namespaces, a fresh tmpfs of bounded size
at its work directory, /tmp and /dev/shm (the template's root and /dev are
read-only, and stay so in the run's namespace: the kernel locks a mount's
read-only flag in a less privileged namespace), an empty read-only /proc,
and no capabilities, so runs
forked from one template cannot see, signal or share anything with each
other or with the template. The template clones the namespaces' init (into
the user and PID namespaces), which makes the others, sets them up and
forks the guest (so the program is not an init, whose
signals behave differently); the init exits as the guest did (128+N for
signal N, as bwrap does), and its exit ends every process of the run.

``process`` (the process profile): the guest is forked directly, in its own
session, and dies with the template.

Nothing here runs program code, and the template makes itself non-dumpable:
a guest (same uid) cannot ptrace it or read its memory.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import gc
import os
import select
import signal
import socket
import struct
import sys
from collections.abc import Sequence
from typing import NoReturn

from tether.codec.forkserver import (
    EXITED,
    FAILED,
    FORKED,
    REQUEST_FDS,
    decode_request,
    encode_reply,
    exit_status,
)

from . import confine, heap, shim
from .channel import CHANNEL_FD

#: The control socket moves off fd 3 (each guest's channel) to the lowest free
#: descriptor from here: never onto one the template holds (a Landlock rule's).
_CONTROL_FLOOR = 10

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUTS = 0x04000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
#: The namespaces a run's init is cloned into: its PID namespace can only be
#: entered so (an unshare() would put the init's children there, not the
#: init), and the user namespace that owns it comes with it.
_CLONED_NAMESPACES = _CLONE_NEWUSER | _CLONE_NEWPID
#: The others the init makes itself, as the owner of that user namespace
#: (they are owned by it as if cloned): made there, they are made on both
#: CPUs at once, not one after another by the template.
_UNSHARED_NAMESPACES = _CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWIPC | _CLONE_NEWUTS
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_NO_NEW_PRIVS = 38
_CAP_VERSION_3 = 0x20080522
_MS_RDONLY, _MS_NOSUID, _MS_NODEV = 0x1, 0x2, 0x4
_MS_REMOUNT, _MS_BIND, _MS_REC = 0x20, 0x1000, 0x4000
#: Directories bwrap bound read-only for the template that the guests read
#: later (the interpreter, tether and cbor2, packages): those under /tmp or
#: /dev/shm are bound again over each run's fresh tmpfs.
_BOUND: list[str] = []
#: Thread-pool sizes of numerical libraries (OpenBLAS, OpenMP, MKL): 1 in a
#: template that preloads, unless the Runtime's env says otherwise.
_THREAD_POOLS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

_SYS_CLONE = {"x86_64": 56, "aarch64": 220}.get(os.uname().machine, -1)
_libc = ctypes.CDLL(None, use_errno=True)
_libc_gil = ctypes.PyDLL(None, use_errno=True)  # keeps the GIL across clone(), as os.fork()
_pythonapi = ctypes.pythonapi


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


class _Template:
    """The fork server's loop and its bookkeeping."""

    def __init__(self, isolate: bool, confinement: confine.Confinement) -> None:
        control = fcntl.fcntl(CHANNEL_FD, fcntl.F_DUPFD_CLOEXEC, _CONTROL_FLOOR)
        os.close(CHANNEL_FD)
        self.isolate = isolate
        self.confinement = confinement
        self.control = socket.socket(fileno=control)
        self.wake_r, self.wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.running: dict[int, int] = {}  # run token -> pid, until its exit is reported

    def serve(self) -> NoReturn:
        _check(_libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        while True:
            ready, _, _ = select.select([self.control.fileno(), self.wake_r], [], [])
            if self.wake_r in ready:
                with contextlib.suppress(BlockingIOError):
                    os.read(self.wake_r, 512)
            if self.control.fileno() in ready:
                try:
                    message, fds, _, _ = socket.recv_fds(self.control, 4096, 3)
                except InterruptedError:
                    continue
                if not message:
                    os._exit(0)  # the host is gone; bwrap or PDEATHSIG ends the guests
                self._serve_request(message, fds)
            self._report_exits()

    def _serve_request(self, message: bytes, fds: list[int]) -> None:
        token = 0
        try:
            request = decode_request(message)
            if request is None or len(fds) != REQUEST_FDS:
                raise OSError(0, "malformed request")
            token, disk_bytes, rehearse, prepare_heap, workdir = request
            keep = (self.control.fileno(), self.wake_r, self.wake_w)
            pid = self.running[token] = _fork_guest(fds, workdir, disk_bytes, self.isolate,
                                                    template_fds=keep, rehearse=rehearse,
                                                    prepare_heap=prepare_heap,
                                                    confinement=self.confinement)
            pidfd = os.pidfd_open(pid)
            try:  # the host learns the pid as it sees it from the pidfd
                socket.send_fds(self.control, [encode_reply(FORKED, token, pid)], [pidfd])
            finally:
                os.close(pidfd)
        except OSError as exc:  # e.g. fork hit a limit: the host starts the guest cold
            self.control.send(encode_reply(FAILED, token, exc.errno or 0))
        finally:
            for fd in fds:
                os.close(fd)

    def _report_exits(self) -> None:
        """Report each guest's exit. A ``process`` guest's group is killed
        before the guest is reaped (its id stays taken until then): what the
        program left running dies with it, as the host's own kill would do."""
        for token, pid in list(self.running.items()):
            status = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            if status is None:
                continue
            if not self.isolate:  # under namespaces the init's exit did it
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            del self.running[token]
            self.control.send(encode_reply(EXITED, token, exit_status(status)))


def _fork_guest(fds: list[int], workdir: str, disk_bytes: int, isolate: bool, *,
                template_fds: tuple[int, ...], rehearse: bool, prepare_heap: bool,
                confinement: confine.Confinement) -> int:
    """Fork the run's first process: the guest itself (``process``), or the init
    of the run's new namespaces, which forks the guest (``namespaces``)."""
    pid = _clone_into_namespaces() if isolate else os.fork()
    if pid:
        # Its own process group before the host hears of it (the child does
        # the same; whichever runs first): the host kills the run by it.
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)
        return pid
    try:
        os.setpgid(0, 0)
        for fd in template_fds:
            os.close(fd)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        if not isolate:
            _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            _become_guest(fds, workdir, confinement, rehearse, prepare_heap)
        _check(_libc.unshare(_UNSHARED_NAMESPACES), "unshare")
        _map_ids()
        _private_mounts(workdir, disk_bytes)
        guest = os.fork()
        if guest == 0:
            os.setsid()
            _drop_capabilities()
            _become_guest(fds, workdir, confinement, rehearse, prepare_heap)
        _serve_as_init(guest, fds)
    except BaseException as exc:  # nothing may return into the template's loop
        with contextlib.suppress(Exception):
            os.write(2, f"tether zygote: cannot start a guest: {exc!r}\n".encode())
        os._exit(70)


def _clone_into_namespaces() -> int:
    """fork(), but the child starts in new namespaces as its PID namespace's
    init (unshare() would put only the child's children there). The
    interpreter is prepared for it exactly as os.fork() does."""
    _pythonapi.PyOS_BeforeFork()
    pid = int(_libc_gil.syscall(_SYS_CLONE, _CLONED_NAMESPACES | signal.SIGCHLD, 0, 0, 0, 0))
    if pid == 0:
        _pythonapi.PyOS_AfterFork_Child()
        return 0
    errno = ctypes.get_errno()
    _pythonapi.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(errno, f"clone: {os.strerror(errno)}")
    return pid


def _serve_as_init(guest: int, fds: list[int]) -> NoReturn:
    """Wait for the guest and exit as it did (128+N for signal N, as bwrap
    does); its exit ends the namespace and every process left in it.
    Signals from inside the namespace do not reach an init without handlers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The host's SIGTERM after CANCEL reaches an init only through a handler,
    # and the guest, in a session of its own, only through the init.
    signal.signal(signal.SIGTERM, lambda *_: _forward(guest, signal.SIGTERM))
    for fd in fds:
        os.close(fd)
    _drop_capabilities()
    while True:
        pid, status = os.waitpid(-1, 0)  # orphans of the run land here too
        if pid == guest:
            code = os.waitstatus_to_exitcode(status)
            os._exit(128 - code if code < 0 else code)


def _forward(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signum)


def _map_ids() -> None:
    uid, gid = os.geteuid(), os.getegid()
    for name, text in (("uid_map", f"{uid} {uid} 1"), ("setgroups", "deny"),
                       ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def _become_guest(fds: list[int], workdir: str, confinement: confine.Confinement,
                  rehearse: bool, prepare_heap: bool) -> NoReturn:
    channel, stdout, stderr = fds
    os.dup2(channel, CHANNEL_FD)
    os.dup2(stdout, 1)
    os.dup2(stderr, 2)
    # Confined after the run's namespaces and mounts, before any code of the run
    # (and before the descriptors it prepared in the template are closed).
    confine.apply(confinement, workdir)
    os.closerange(CHANNEL_FD + 1, 1 << 16)
    for name in ("HOME", "TMPDIR", "PWD"):
        os.environ[name] = workdir
    if rehearse:  # again: the pages a run writes are copied now, while it waits for RUN
        shim.rehearse()
    if prepare_heap:
        heap.prepare()
    shim.main(workdir)  # asyncio is loaded, but only a program that uses it makes a loop
    os._exit(0)


def _private_mounts(workdir: str, disk_bytes: int) -> None:
    """The run's only writable places, each a tmpfs of its own of at most
    ``disk_bytes`` (0: unbounded), and an empty read-only /proc. What the
    template has bound under /tmp or /dev/shm (its code, packages) is bound
    again, read-only, on the new tmpfs."""
    flags = _MS_NOSUID | _MS_NODEV
    options = b"mode=0755" + (b",size=%d" % disk_bytes if disk_bytes else b"")
    under = [p for p in _BOUND if p.startswith(("/tmp/", "/dev/shm/")) and os.path.isdir(p)]
    outermost = [p for p in sorted(set(under))
                 if not any(p.startswith(q + "/") for q in under if q != p)]
    covered = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY)) for path in outermost]
    for target in ("/tmp", "/dev/shm", "/proc", workdir):
        if target == workdir:  # it may have been under the /tmp just covered
            os.makedirs(workdir, exist_ok=True)
        if target == "/proc":  # the last use of /proc/self/fd
            for path, fd in covered:
                os.makedirs(path, exist_ok=True)
                source = f"/proc/self/fd/{fd}".encode()
                _check(_libc.mount(source, path.encode(), None, _MS_BIND | _MS_REC, None),
                       f"bind {path}")
                _check(_libc.mount(None, path.encode(), None,
                                   _MS_BIND | _MS_REMOUNT | _MS_RDONLY | flags, None),
                       f"remount {path} read-only")
                os.close(fd)
        if os.path.isdir(target):
            extra = _MS_RDONLY if target == "/proc" else 0
            _check(_libc.mount(b"tmpfs", target.encode(), b"tmpfs", flags | extra, options),
                   f"mount tmpfs on {target}")


def _drop_capabilities() -> None:
    header = struct.pack("<Ii", _CAP_VERSION_3, 0)
    data = bytes(24)  # two empty {effective, permitted, inheritable} sets
    _check(_libc.capset(header, data), "capset")
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


def main(isolate: bool, confinement: confine.Confinement, preload: Sequence[str] = (),
         packages: Sequence[str] = ()) -> NoReturn:
    import cbor2

    import tether

    from . import aio  # noqa: F401 - every forked guest starts with asyncio loaded

    guest = os.path.dirname(os.path.dirname(os.path.realpath(shim.__file__)))
    _BOUND.extend(os.path.realpath(p) for p in (
        sys.base_prefix, os.path.dirname(cbor2.__file__), os.path.dirname(tether.__file__),
        guest, os.path.dirname(os.path.realpath(tether.codec.__file__)), *packages))

    # Third-party modules the runs will import: loaded once, here. Each
    # guest gets the template's pages copy-on-write, so what a program
    # changes in them (a patched attribute) stays in its own copy.
    if preload:
        for name in _THREAD_POOLS:  # numerical libraries start no threads of their own
            os.environ.setdefault(name, "1")
        shim.preload(preload)
        threads = len(os.listdir("/proc/self/task"))
        if threads > 1:  # a fork would copy locks those threads hold, and not the threads
            os.write(2, f"tether zygote: preloading {', '.join(preload)} started {threads - 1} "
                        f"threads; a template with threads cannot fork\n".encode())
            os._exit(70)

    # Everything loaded so far stays out of the collector's sight: a guest
    # that collects then does not write to (and so copy) every page of it.
    shim.rehearse()  # each guest starts past the shim's first-use paths
    # Now, while fds 0-3 are open: the descriptors it keeps for the guests'
    # Landlock rules are never one a guest's dup2() onto fd 1-3 replaces.
    confine.warm(confinement)
    gc.collect()
    gc.freeze()
    _Template(isolate, confinement).serve()
