"""The CPython fork server's control messages, for both of its sides
(host/guests/zygote.py and guest/python/zygote.py). Not the tether protocol: fd 3
of the template is a SOCK_SEQPACKET socket, one message per request or
reply, and descriptors travel beside the bytes (SCM_RIGHTS). Nothing here
does I/O.

A request is a run token, the size bound of the run's writable mounts (0
for none), whether the guest rehearses a run before its HELLO (one that will
wait in a pool does, one forked for a run already waiting does not) and
whether it makes its heap ready too (one that will wait long), ``<IQ??``,
then the run's work directory (UTF-8), carrying three descriptors:
the run's fd 3, stdout and stderr. A reply is ``<cIi``
(kind, token, value): :data:`FORKED` (the pid as the template sees it, a
pidfd for it attached), :data:`FAILED` (an errno), :data:`EXITED` (the exit
status, negative for a signal; the guest is reaped).
"""

from __future__ import annotations

import os
import signal
import struct

REQUEST = struct.Struct("<IQ??")
REPLY = struct.Struct("<cIi")
#: Descriptors a request carries.
REQUEST_FDS = 3

FORKED = b"S"
FAILED = b"F"
EXITED = b"X"
#: The exit status of a guest whose template is gone (it died with it).
LOST = -signal.SIGKILL


def exit_status(status: os.waitid_result) -> int:
    """A reaped process's exit status from ``os.waitid``: its exit code, or
    -N when signal N killed it (as :data:`EXITED` carries it, and as the
    host reports every guest's)."""
    if status.si_code in (os.CLD_KILLED, os.CLD_DUMPED):
        return -status.si_status
    return status.si_status


def encode_request(token: int, disk_bytes: int | None, workdir: str, *,
                   rehearse: bool = True, heap: bool = False) -> bytes:
    return REQUEST.pack(token, disk_bytes or 0, rehearse, heap) + workdir.encode()


def decode_request(message: bytes) -> tuple[int, int, bool, bool, str] | None:
    """(token, disk_bytes, rehearse, heap, workdir), or None when ``message``
    is too short."""
    if len(message) <= REQUEST.size:
        return None
    token, disk_bytes, rehearse, heap = REQUEST.unpack_from(message)
    return token, disk_bytes, rehearse, heap, message[REQUEST.size:].decode()


def encode_reply(kind: bytes, token: int, value: int) -> bytes:
    return REPLY.pack(kind, token, value)


def decode_reply(message: bytes) -> tuple[bytes, int, int] | None:
    """(kind, token, value), or None when ``message`` is not a reply (the
    template's end of file, or garbage)."""
    if len(message) != REPLY.size:
        return None
    kind, token, value = REPLY.unpack(message)
    return kind, token, value
