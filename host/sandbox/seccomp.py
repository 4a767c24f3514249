"""The seccomp filter every guest runs under, in every profile.

The kernel, not the namespaces, is what a program reaches with every system
call; this filter takes away the calls that an interpreter running a
model's program never needs and that are the usual way into the kernel or
out of a sandbox (the list follows Docker's default profile; each entry
says why, and docs/security.md lists them with the tests that check them).
A denied call fails with EPERM, an ordinary error the program can report;
``clone3`` fails with ENOSYS, which makes the C library fall back to
``clone``, whose flags the filter can see. Calls made for another
architecture (32-bit ``int 0x80``, x32) fail with EPERM as a whole.

The filter is built with libseccomp (through ``pyseccomp``) once per policy
and exported as BPF: bwrap installs it for spawned guests (``--seccomp``),
and a guest that confines itself (guest/python/confine.py) installs the
same bytes with prctl(). Either way it is in place before program code runs
and after tether's own setup (a forked guest's namespaces are made first).
"""

from __future__ import annotations

import errno
import tempfile
from dataclasses import dataclass
from functools import cache
from typing import Any

#: Namespace flags of clone() and unshare(). CLONE_NEWTIME (0x80) is an
#: unshare() flag only: in clone()'s flags that bit belongs to the exit signal.
CLONE_NAMESPACES = {
    "CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
CLONE_NEWTIME = 0x80

#: Every call the default filter denies, with the reason. ``clone``,
#: ``unshare`` and ``personality`` are denied only with some arguments (see
#: CONDITIONAL); every other entry whatever its arguments.
DENIED: dict[str, str] = {
    # Kernel attack surface no interpreter needs, behind many recent exploits.
    "io_uring_setup": "io_uring: a second system-call interface the filter cannot see into",
    "io_uring_enter": "io_uring",
    "io_uring_register": "io_uring",
    "userfaultfd": "stalls kernel code at will: a standard tool for exploiting races",
    "bpf": "loads programs into the kernel",
    "perf_event_open": "kernel profiling: a large, often-exploited interface, and side channels",
    "keyctl": "the kernel keyring: shared across the machine, not namespaced",
    "add_key": "the kernel keyring",
    "request_key": "the kernel keyring",
    # The sandbox's own shape: namespaces and mounts are tether's to make.
    "setns": "joins another namespace",
    "mount": "changes the filesystem view",
    "umount2": "uncovers what the sandbox's mounts hide",
    "pivot_root": "changes the root",
    "chroot": "changes the root (the classic chroot escape needs it)",
    "fsopen": "the new mount API",
    "fsconfig": "the new mount API",
    "fsmount": "the new mount API",
    "fspick": "the new mount API",
    "move_mount": "the new mount API",
    "open_tree": "the new mount API",
    "mount_setattr": "the new mount API",
    # Other processes' memory and descriptors.
    "ptrace": "reads and writes other processes (PTRACE_TRACEME too: a known escalation path)",
    "process_vm_readv": "reads another process's memory",
    "process_vm_writev": "writes another process's memory",
    "process_madvise": "acts on another process's memory",
    "pidfd_getfd": "takes a descriptor from another process (the host's, under `process`)",
    "kcmp": "compares other processes' kernel objects: an information leak",
    # The machine.
    "kexec_load": "replaces the running kernel",
    "kexec_file_load": "replaces the running kernel",
    "init_module": "loads kernel code",
    "finit_module": "loads kernel code",
    "delete_module": "unloads kernel code",
    "acct": "process accounting for the whole machine",
    "swapon": "machine-wide memory",
    "swapoff": "machine-wide memory",
    "reboot": "the machine",
    "iopl": "raw I/O ports",
    "ioperm": "raw I/O ports",
    "settimeofday": "the machine's clock",
    "clock_settime": "the machine's clock",
    "clock_adjtime": "the machine's clock",
    "adjtimex": "the machine's clock",
    "sethostname": "the host name",
    "setdomainname": "the domain name",
    "syslog": "the kernel log: addresses that defeat KASLR",
    "vhangup": "hangs up the terminal",
    "quotactl": "filesystem quotas",
    "quotactl_fd": "filesystem quotas",
    # Filesystem handles: open_by_handle_at is the "shocker" container escape.
    "open_by_handle_at": "opens any file by handle, past every mount and path check",
    "name_to_handle_at": "the other half of open_by_handle_at",
    "fanotify_init": "watches the whole filesystem",
    "lookup_dcookie": "kernel profiling",
    # Obsolete entry points, rarely exercised code.
    "uselib": "obsolete: a.out libraries",
    "ustat": "obsolete",
    "sysfs": "obsolete",
    "_sysctl": "obsolete",
    "nfsservctl": "obsolete",
    "create_module": "obsolete",
    "get_kernel_syms": "obsolete",
    "query_module": "obsolete",
    "vm86": "obsolete (32-bit)",
    "vm86old": "obsolete (32-bit)",
    # Denied with some arguments only.
    "clone": "with a namespace flag: a nested user namespace is the entry point of many "
             "kernel exploits (threads and fork stay allowed)",
    "unshare": "with a namespace flag (as clone)",
    "personality": "anything but the default: READ_IMPLIES_EXEC and ADDR_NO_RANDOMIZE undo "
                   "hardening",
}
CONDITIONAL = ("clone", "unshare", "personality")
#: Calls on objects of the IPC namespace, denied where a run has none of its
#: own (``process``): System V shared memory, message queues and semaphore
#: sets, and POSIX message queues, are the machine's, visible to every later
#: run and kept after the Runtime closes. Under ``namespaces`` each run's IPC
#: namespace holds them, and they end with it. POSIX semaphores and shared
#: memory (``sem_open``, ``shm_open``: what ``multiprocessing`` uses) are
#: files in ``/dev/shm``, which the profile's Landlock rules keep out of reach.
SHARED_IPC: dict[str, str] = {
    "shmget": "System V shared memory: the machine's, outlives the run",
    "shmat": "System V shared memory",
    "shmctl": "System V shared memory",
    "shmdt": "System V shared memory",
    "msgget": "System V message queues: the machine's, outlive the run",
    "msgsnd": "System V message queues",
    "msgrcv": "System V message queues",
    "msgctl": "System V message queues",
    "semget": "System V semaphore sets: the machine's, outlive the run",
    "semop": "System V semaphore sets",
    "semtimedop": "System V semaphore sets",
    "semctl": "System V semaphore sets",
    "ipc": "every System V IPC call at once, where an architecture multiplexes them",
    "mq_open": "POSIX message queues: the machine's, outlive the run",
    "mq_unlink": "POSIX message queues",
    "mq_timedsend": "POSIX message queues",
    "mq_timedreceive": "POSIX message queues",
    "mq_notify": "POSIX message queues",
    "mq_getsetattr": "POSIX message queues",
}
#: Fails with ENOSYS, so the C library uses clone(), whose flags are visible
#: (clone3 takes them through a pointer, which a filter cannot read).
ENOSYS_CALLS = ("clone3",)


class SeccompUnavailable(RuntimeError):
    """libseccomp (the Debian package libseccomp2) cannot be loaded."""


@dataclass(frozen=True, slots=True)
class SyscallFilter:
    """The seccomp filter for a Runtime's guests (``Runtime(syscall_filter=...)``;
    ``None`` turns it off). On by default, in every profile.

    - ``deny``: more calls to deny (EPERM), by name (``"socket"``).
    - ``allow``: calls of the default list to let through, by name (e.g.
      ``("ptrace",)`` for a package that debugs its own children).

    Under ``process`` the filter also denies SHARED_IPC (a run there has no
    IPC namespace of its own); ``allow`` lets those through too.
    """

    deny: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in self.allow:
            if name not in DENIED and name not in ENOSYS_CALLS and name not in SHARED_IPC:
                raise ValueError(f"SyscallFilter.allow: {name!r} is not denied by default")

    def denied(self, *, private_ipc: bool = True) -> tuple[str, ...]:
        """Every call this filter denies (with or without conditions);
        ``private_ipc``: each run has an IPC namespace of its own, else
        SHARED_IPC is denied too."""
        shared = () if private_ipc else tuple(SHARED_IPC)
        return tuple(n for n in (*DENIED, *ENOSYS_CALLS, *shared, *self.deny)
                     if n not in self.allow)

    def bpf(self, *, private_ipc: bool = True) -> bytes:
        """The compiled filter (cached per policy), for guests with an IPC
        namespace of their own or not (``private_ipc``, as :meth:`denied`).
        Raises SeccompUnavailable."""
        return _compile(self, private_ipc)


@cache
def _library() -> Any:
    try:
        import pyseccomp
    except (ImportError, OSError, RuntimeError) as exc:
        raise SeccompUnavailable(f"libseccomp cannot be loaded ({exc}); Debian: apt-get "
                                 f"install libseccomp2") from exc
    return pyseccomp


@cache
def _compile(policy: SyscallFilter, private_ipc: bool) -> bytes:
    sc = _library()
    native = sc.Arch.NATIVE
    eperm = sc.ERRNO(errno.EPERM)
    rules = sc.SyscallFilter(sc.ALLOW)
    rules.set_attr(sc.Attr.ACT_BADARCH, eperm)
    rules.set_attr(sc.Attr.CTL_OPTIMIZE, 2)  # a binary tree: each call walks few instructions
    for name in policy.denied(private_ipc=private_ipc):
        number = sc.resolve_syscall(native, name)
        if number < 0:  # not a call of this architecture
            if name in policy.deny:
                raise ValueError(f"SyscallFilter.deny: no system call {name!r} here")
            continue
        if name in ENOSYS_CALLS:
            rules.add_rule(sc.ERRNO(errno.ENOSYS), number)
        elif name == "personality":
            rules.add_rule(eperm, number, sc.Arg(0, sc.NE, 0))
        elif name in ("clone", "unshare"):
            bits = list(CLONE_NAMESPACES.values())
            if name == "unshare":
                bits.append(CLONE_NEWTIME)
            for bit in bits:
                rules.add_rule(eperm, number, sc.Arg(0, sc.MASKED_EQ, bit, bit))
        else:
            rules.add_rule(eperm, number)
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        return out.read()


def available() -> str | None:
    """None if filters can be built here, else why not (for doctor)."""
    try:
        _library()
    except SeccompUnavailable as exc:
        return str(exc)
    return None
