"""What a guest does to itself before any program code runs: a Landlock
ruleset (the ``process`` profile) and the seccomp filter the host compiled.

The host builds the filter with libseccomp and passes its BPF in the
command line; installing it needs nothing but two prctl() calls, so a guest
needs neither libseccomp nor host code. Landlock takes three system calls,
made here through ctypes. Both survive execve(), so this module is also a
launcher for guests that cannot confine themselves (Node under
``process``)::

    python -I -S -B confine.py --cwd DIR [OPTIONS] -- ARGV...

Options (each may repeat): ``--seccomp HEX`` (the BPF program),
``--landlock-read PATH`` and ``--landlock-write PATH``; with any Landlock
option the work directory is writable and everything not listed is
neither readable nor writable.

Only cheap parts of the standard library are imported (no dataclasses,
functools or typing at run time): the launcher is a whole interpreter start
in front of every such guest.
"""

from __future__ import annotations

import ctypes
import os
import stat
import struct
import sys

_PR_SET_NO_NEW_PRIVS = 38
_PR_GET_NO_NEW_PRIVS = 39
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2

_SYS_LANDLOCK = {"create_ruleset": 444, "add_rule": 445, "restrict_self": 446}
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

# Landlock filesystem rights (linux/landlock.h), and the ABI that added each.
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_ABI1_FS = (1 << 13) - 1  # execute ... make_sym
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
_READ = _EXECUTE | _READ_FILE | _READ_DIR
_NET_TCP = 0b11  # bind_tcp | connect_tcp (ABI 4)
_SCOPE_ALL = 0b11  # abstract_unix_socket | signal (ABI 6)

_libc = ctypes.CDLL(None, use_errno=True)


class _Fprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


class Confinement:
    """``seccomp``: the BPF program; ``read``, ``write``: Landlock's paths."""

    __slots__ = ("prepared", "read", "seccomp", "write")

    def __init__(self, seccomp: bytes = b"", read: tuple[str, ...] = (),
                 write: tuple[str, ...] = ()) -> None:
        self.seccomp = seccomp
        self.read = read
        self.write = write
        self.prepared: _Prepared | None = None

    @property
    def landlock(self) -> bool:
        return bool(self.read or self.write)


def parse(args: list[str]) -> Confinement:
    """The confinement options in ``args`` (which are removed from it)."""
    values: dict[str, list[str]] = {"--seccomp": [], "--landlock-read": [],
                                    "--landlock-write": []}
    rest: list[str] = []
    i = 0
    while i < len(args):
        if args[i] in values and i + 1 < len(args):
            values[args[i]].append(args[i + 1])
            i += 2
        else:
            rest.append(args[i])
            i += 1
    args[:] = rest
    return Confinement(bytes.fromhex("".join(values["--seccomp"])),
                       tuple(values["--landlock-read"]), tuple(values["--landlock-write"]))


def apply(confinement: Confinement, workdir: str | None) -> None:
    """Landlock (if asked for and the kernel has it), then the filter. Raises
    OSError if either cannot be installed: a guest never runs a program less
    confined than the host asked for, except where the kernel lacks Landlock
    (the host warns about that)."""
    if not (confinement.seccomp or confinement.landlock):
        return
    prepared = prepare(confinement)
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    if prepared.rules is not None:
        prepared.restrict(workdir)
    if prepared.program is not None:
        _check(_libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, prepared.program, 0, 0),
               "prctl(PR_SET_SECCOMP)")


def prepare(confinement: Confinement) -> _Prepared:
    """Everything ``apply`` needs that does not depend on the run, built once:
    a fork server prepares it, and each guest it forks only makes the calls."""
    if confinement.prepared is None:
        confinement.prepared = _Prepared(confinement)
    return confinement.prepared


#: An O_PATH descriptor and the landlock_path_beneath_attr that names it.
_Rule = tuple[int, "ctypes.Array[ctypes.c_char]"]


class _Prepared:
    def __init__(self, confinement: Confinement) -> None:
        self.program: ctypes._CArgObject | None = None  # a pointer to the sock_fprog
        self.rules: list[_Rule] | None = None
        if confinement.seccomp:
            bpf = confinement.seccomp
            if len(bpf) % 8:
                raise ValueError("a BPF program is a sequence of 8-byte instructions")
            self._filter = ctypes.create_string_buffer(bpf, len(bpf))
            self._fprog = _Fprog(len(bpf) // 8, ctypes.cast(self._filter, ctypes.c_void_p))
            self.program = ctypes.byref(self._fprog)
        abi = landlock_abi()
        if not confinement.landlock or abi == 0:
            return
        self.fs = _ABI1_FS | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0) \
            | (_IOCTL_DEV if abi >= 5 else 0)
        net = _NET_TCP if abi >= 4 else 0
        scoped = _SCOPE_ALL if abi >= 6 else 0
        self.size = 24 if abi >= 6 else 16 if abi >= 4 else 8
        self.attr = ctypes.create_string_buffer(
            struct.pack("<QQQ", self.fs, net, scoped)[:self.size], self.size)
        self.rules = []
        for paths, rights in ((confinement.read, _READ & self.fs),
                              (confinement.write, self.fs)):
            for path in paths:
                rule = _rule(path, rights)
                if rule is not None:
                    self.rules.append(rule)

    def restrict(self, workdir: str | None) -> None:
        """Landlock this process: the prepared rules, and ``workdir`` writable.
        Closes the prepared descriptors (this process uses them once)."""
        assert self.rules is not None
        rules, self.rules = self.rules, []
        if workdir is not None and (own := _rule(workdir, self.fs)) is not None:
            rules.append(own)
        try:
            ruleset = int(_libc.syscall(_SYS_LANDLOCK["create_ruleset"], self.attr,
                                        ctypes.c_size_t(self.size), ctypes.c_uint32(0)))
            if ruleset < 0:
                _check(ruleset, "landlock_create_ruleset")
            try:
                for _, rule in rules:
                    _check(_libc.syscall(_SYS_LANDLOCK["add_rule"], ruleset,
                                         _RULE_PATH_BENEATH, rule, 0), "landlock_add_rule")
                _check(_libc.syscall(_SYS_LANDLOCK["restrict_self"], ruleset, 0),
                       "landlock_restrict_self")
            finally:
                os.close(ruleset)
        finally:
            for fd, _ in rules:
                os.close(fd)


def warm(confinement: Confinement) -> None:
    """For a fork server: prepare ``confinement`` and resolve the C functions
    it calls, so that each forked guest finds them ready."""
    prepare(confinement)
    _libc.prctl(_PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 where it has none (or it is off)."""
    if not _abi:
        version = _libc.syscall(_SYS_LANDLOCK["create_ruleset"], None, ctypes.c_size_t(0),
                                ctypes.c_uint32(_CREATE_RULESET_VERSION))
        _abi.append(max(0, int(version)))
    return _abi[0]


_abi: list[int] = []


def _rule(path: str, rights: int) -> _Rule | None:
    """An O_PATH descriptor of ``path`` and the path-beneath rule granting
    ``rights`` under it; None for a path this machine lacks (no rule needed)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISDIR(os.fstat(fd).st_mode):
        rights &= _FILE_RIGHTS  # a rule on a file may hold only a file's rights
    return fd, ctypes.create_string_buffer(struct.pack("<Qi", rights, fd), 12)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _launch(args: list[str]) -> None:
    """The launcher: confine, then exec the command after ``--``."""
    split = args.index("--")
    own, argv = args[:split], args[split + 1:]
    workdir = own[own.index("--cwd") + 1] if "--cwd" in own else None
    apply(parse(own), workdir)
    os.execv(argv[0], argv)


if __name__ == "__main__":
    _launch(sys.argv[1:])
