"""What the program's process writes below print, to fds 1 and 2 themselves
(``os.write(1, ...)``, a subprocess that inherits them, C code), captured
into the program's output (R-OUTPUT-5).

Each of the two is a memory file for the run: a write to it never blocks
for want of a reader (a pipe would hold a subprocess that writes more than
its buffer while the program waits for it, and reading one needs a thread
or the event loop), and the guest reads what was written since it last
looked whenever it sends text of its own, before a CALL and before DONE:
a line printed after a subprocess ran comes after the subprocess's
output, as on a terminal.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Final

from tether.codec import Stream

#: Read at a time.
CHUNK: Final = 64 * 1024
#: Read this far into a file, the guest gives back the memory of what it has
#: read (the file's pages are memory the run is charged for).
RECLAIM_BYTES: Final = 4 * 1024 * 1024
_FALLOC_FL_KEEP_SIZE, _FALLOC_FL_PUNCH_HOLE = 0x01, 0x02


class RawOutput:
    """fds 1 and 2 as memory files, and how far the guest has read each."""

    def __init__(self, files: dict[Stream, int], host: tuple[int, int]) -> None:
        self._files = files  # each stream's file, on a descriptor of the guest's own
        self._host = host  # where fds 1 and 2 led before
        self._read = dict.fromkeys(files, 0)
        self._reclaimed = dict.fromkeys(files, 0)

    @classmethod
    def capture(cls) -> RawOutput | None:
        """fds 1 and 2 made memory files of their own; None where the system
        has none to make (they are left as they are: the host's pipes).
        Done while the guest waits for its RUN: the first memory file of a
        process takes a while to make."""
        files: dict[Stream, int] = {}
        try:
            for stream in (Stream.STDOUT, Stream.STDERR):
                files[stream] = os.memfd_create(f"tether-{stream.value}", os.MFD_CLOEXEC)
        except (AttributeError, OSError):
            for fd in files.values():
                os.close(fd)
            return None
        host = os.dup(1), os.dup(2)  # not inherited
        os.dup2(files[Stream.STDOUT], 1)  # inherited by subprocesses: no close-on-exec
        os.dup2(files[Stream.STDERR], 2)
        return cls(files, host)

    def release(self) -> None:
        """fds 1 and 2 lead to the host again: what the guest itself says
        after the run (its own failure) reaches it raw (R-TRANS-2)."""
        os.dup2(self._host[0], 1)
        os.dup2(self._host[1], 2)

    @staticmethod
    def fileno(stream: Stream) -> int:
        """The descriptor the program writes ``stream`` to itself."""
        return 1 if stream is Stream.STDOUT else 2

    def take(self) -> Iterator[tuple[Stream, bytes]]:
        """What was written to each since the last look, stdout first."""
        for stream, fd in self._files.items():
            while data := os.pread(fd, CHUNK, self._read[stream]):
                self._read[stream] += len(data)
                yield stream, data
            if self._read[stream] - self._reclaimed[stream] >= RECLAIM_BYTES:
                self._reclaim(stream, fd)

    def _reclaim(self, stream: Stream, fd: int) -> None:
        """The read part of ``stream``'s file made a hole: its memory goes
        back, its size and the writers' offset stay."""
        import ctypes

        fallocate = ctypes.CDLL(None, use_errno=True).fallocate
        fallocate.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long)
        with contextlib.suppress(OSError):  # where it fails, the memory stays
            fallocate(fd, _FALLOC_FL_KEEP_SIZE | _FALLOC_FL_PUNCH_HOLE, 0, self._read[stream])
        self._reclaimed[stream] = self._read[stream]
