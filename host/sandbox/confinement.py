"""What confines a guest besides its profile's process setup: the seccomp
filter (host/sandbox/seccomp.py) everywhere, and Landlock under ``process``.

Under ``namespaces`` bwrap installs the filter (``--seccomp``), and forked
guests install it themselves once their namespaces exist. Landlock adds
nothing there that the namespaces do not already give: signals cannot
leave the PID namespace, abstract Unix sockets belong to the network
namespace, and the filesystem view is bwrap's.

Under ``process`` there is no bwrap: the CPython guest confines itself at
start, from options in its argv, before it reads RUN; every other guest is
exec'd through guest/python/confine.py, which confines itself and then
execs the guest (both survive execve). The Landlock rules: the system
directories and the guest's own interpreter and code are readable and
executable, a few devices readable and writable, the work directory
writable; nothing else is reachable, TCP bind and connect are denied
(Landlock ABI 4), and with ABI 6 the guest can neither signal a process
outside its domain nor connect to an abstract Unix socket outside it.
"""

from __future__ import annotations

import ctypes
import os
import sys
from functools import cache

from .paths import GUEST_DIR, guest_binds

#: Read (and execute) under Landlock, as bwrap shows them under namespaces.
SYSTEM_READ = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc/ld.so.cache",
               "/etc/localtime", "/etc/ssl/openssl.cnf", "/proc")
#: Devices a guest may open for reading and writing.
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
LAUNCHER = str(GUEST_DIR / "python" / "confine.py")


#: landlock_create_ruleset, the same number on every architecture, and its
#: flag asking for the ABI version instead of making a ruleset.
_SYS_LANDLOCK_CREATE_RULESET = 444
_CREATE_RULESET_VERSION = 1


@cache
def landlock_version() -> int:
    """This kernel's Landlock ABI (0: none), probed once. The host asks the
    kernel itself: it and the guests share only the codec (the guest's
    confine.py applies the rules)."""
    libc = ctypes.CDLL(None, use_errno=True)
    version = libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                           ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, int(version))


@cache
def _landlock_options() -> tuple[str, ...]:
    out: list[str] = []  # the same files bwrap binds for a guest
    for path in _outermost(*SYSTEM_READ, *guest_binds()):
        out += ["--landlock-read", path]
    for path in DEVICES:
        out += ["--landlock-write", path]
    return tuple(out)


def _outermost(*paths: str) -> list[str]:
    """``paths`` resolved, without those beneath another (/bin is /usr/bin on
    a merged-/usr system): each rule costs every guest a system call."""
    real = sorted({os.path.realpath(p) for p in paths if os.path.exists(p)})
    return [p for p in real if not any(p.startswith(q.rstrip("/") + "/") for q in real)]


def options(seccomp: bytes, *, landlock: bool, read: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The confinement options of guest/python/confine.py; ``read``: more
    paths a guest may read (third-party packages)."""
    out: tuple[str, ...] = ("--seccomp", seccomp.hex()) if seccomp else ()
    if landlock and landlock_version() > 0:
        out += _landlock_options()
        for path in _outermost(*read):
            out += ("--landlock-read", path)
    return out


def process_argv(argv: tuple[str, ...], workdir: str, seccomp: bytes, *, landlock: bool,
                 confines_itself: bool, read: tuple[str, ...] = ()) -> tuple[str, ...]:
    """``argv`` under ``process``: with the options appended for a guest that
    confines itself, else behind the launcher."""
    own = options(seccomp, landlock=landlock, read=read)
    if not own:
        return argv
    if confines_itself:
        return (*argv, *own)
    return (os.path.realpath(sys.executable), "-I", "-S", "-B", LAUNCHER, "--cwd", workdir,
            *own, "--", *argv)
