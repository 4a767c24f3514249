"""Isolation profiles (see docs/security.md): which one a machine offers,
and the bwrap command line of the ``namespaces`` one. Starting, limiting
and killing a guest is host/guests/launch.py.

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

import enum
import os
import subprocess
import warnings
from dataclasses import dataclass
from functools import cache

from . import cgroups, confinement
from .paths import guest_binds

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


#: The descriptors bwrap is given besides 0-3: it writes the sandboxed
#: process's pid to INFO_FD, waits for EOF on BLOCK_FD before it execs the
#: guest, and reads the seccomp filter from SECCOMP_FD.
BWRAP_INFO_FD = 4
BWRAP_BLOCK_FD = 5
BWRAP_SECCOMP_FD = 6


def bwrap_argv(argv: tuple[str, ...], env: dict[str, str], workdir: str, *,
               disk_bytes: int | None, seccomp: bool = False,
               binds: tuple[str, ...] = ()) -> tuple[str, ...]:
    """``argv`` wrapped in bwrap. The guest keeps the same paths inside, so
    nothing in its command line changes. The only writable places are
    private tmpfs mounts of at most ``disk_bytes`` each (the work directory,
    /tmp, /dev/shm): the root, /dev and every bind are read-only, so nothing
    a program writes reaches the host's disk or outlives the sandbox.
    ``seccomp``: bwrap reads a BPF filter from BWRAP_SECCOMP_FD and installs
    it just before it execs the guest. ``binds``: more host paths to bind
    read-only (third-party packages)."""
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
           "--info-fd", str(BWRAP_INFO_FD), "--block-fd", str(BWRAP_BLOCK_FD),
           "--clearenv"]
    for path in (*guest_binds(), *binds):
        out += ["--ro-bind", path, path]
    out += [*size, "--tmpfs", workdir, "--chdir", workdir]
    for key, value in env.items():
        out += ["--setenv", key, value]
    if seccomp:
        out += ["--seccomp", str(BWRAP_SECCOMP_FD)]
    return (*out, "--remount-ro", "/", "--", *argv)
