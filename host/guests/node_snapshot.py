"""A startup snapshot of the Node guest: a guest started from it finds its
modules loaded and its own code compiled, and skips most of what it does
before HELLO (Node's ES module loader, compiling the shim, loading ``net``
and ``vm``).

``guest/node/snapshot.mjs`` builds the blob. V8 accepts a blob only from
the same ``node`` binary started with the same V8 flags (the heap limit is
one), so there is one blob per node binary, guest sources and flags, named
by a hash of them, in tether's cache directory (``$XDG_CACHE_HOME/tether``,
else ``~/.cache/tether``: outside the installed package, which ``pip
uninstall`` removes whole), shared by every tether of this user. The
sandbox binds that directory read-only for the guest. A node binary or a
guest that changes gets new names; a host touches a blob it uses (once a
day), and a build removes the blobs no host has touched for a month.

The first guest that finds no blob starts the build and starts from
``main.mjs``, as does every guest until the blob is there, and every guest
if it cannot be built (no writable cache directory, a node that cannot
build snapshots). The build runs apart from the host's runs (a process of
its own session, waited for by a thread of its own, so it never holds up a
run and is reaped even where PID 1 reaps nothing), and the host stops it
only past :data:`BUILD_TIMEOUT`: another host may be waiting for the same
blob. It moves the blob
into place only once a guest started from it has said HELLO, so a blob
that is there is one this node accepted. One that node refuses later
(deleted under a guest starting from it, damaged on disk) is removed when
a guest fails on it and one from ``main.mjs`` does not (:func:`condemn`):
the guest from ``main.mjs`` takes the first one's place, and the blob is
built again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import stat
import subprocess
import threading
import time
from functools import cache
from pathlib import Path

from ..sandbox.paths import GUEST_DIR

_NODE_DIR = GUEST_DIR / "node"


def _cache_dir() -> Path | None:
    base = os.environ.get("XDG_CACHE_HOME", "")
    try:
        root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    except RuntimeError:  # no home directory
        return None
    return root / "tether" / "node-snapshots"


#: Where the blobs are; None: nowhere, guests start from main.mjs.
SNAPSHOT_DIR = _cache_dir()
_BUILD_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}  # no NODE_OPTIONS: its flags would count

_asked: set[Path] = set()  # blobs this process has started to build
_touched: dict[Path, float] = {}  # blob -> when this process last touched it
_refused: dict[Path, tuple[int, int] | None] = {}  # blob -> a file no guest starts from
_condemned: set[Path] = set()  # blobs node refused, removed once
_TOUCH_EVERY = 24 * 3600.0
#: The longest a build may take (its own steps time out sooner).
BUILD_TIMEOUT = 300.0
_lock = threading.Lock()


def snapshot_blob(node: str, flags: tuple[str, ...]) -> Path | None:
    """The blob for guests started as ``node FLAGS``, or None (then the
    guest starts from main.mjs) while it is built or if it cannot be."""
    blob = blob_path(node, flags)
    if blob is None:
        return None
    try:
        found = os.stat(blob)
    except OSError:
        found = None
    if found is not None and stat.S_ISREG(found.st_mode):
        if _refused.get(blob) == (found.st_dev, found.st_ino):
            return None  # this very file: not again
        if time.monotonic() - _touched.get(blob, -_TOUCH_EVERY) >= _TOUCH_EVERY:
            with contextlib.suppress(OSError):  # one this user cannot touch still works
                os.utime(blob)  # in use: no build removes it
            _touched[blob] = time.monotonic()
        return blob
    with _lock:
        if blob in _asked:
            return None
        _asked.add(blob)
    # In a thread of its own: starting a process forks the host, which the
    # event loop calling this need not wait for, and the thread then waits
    # for the build (tether's worker threads are for runs' starts and ends).
    try:
        threading.Thread(target=_build_apart, args=(node, flags, blob), daemon=True,
                         name="tether-node-snapshot").start()
    except RuntimeError:  # no thread to be had now: a later guest asks again
        with _lock:
            _asked.discard(blob)
    return None


def suspect(blob: Path) -> None:
    """A guest started from ``blob`` ended before its HELLO: guests start
    from main.mjs until :func:`condemn` or :func:`acquit` says whose fault
    it was."""
    with _lock:
        _refused[blob] = _identity(blob)


def acquit(blob: Path) -> None:
    """A guest started from main.mjs failed too: the blob was not at fault."""
    with _lock:
        _refused.pop(blob, None)


def condemn(blob: Path) -> bool:
    """A guest started from main.mjs said HELLO where one from ``blob`` did
    not: node refuses it (deleted under the guest, damaged on disk). This
    process starts no more guests from that file; the first time, it is
    removed, so that it is built again. True if it was removed now."""
    with _lock:
        refused = _refused.get(blob)
        if blob in _condemned or refused is None or _identity(blob) != refused:
            return False  # removed once already, gone, or another file since (a new build's)
        try:
            os.unlink(blob)
        except OSError:
            return False
        _condemned.add(blob)
        _asked.discard(blob)
    return True


def _identity(path: Path) -> tuple[int, int] | None:
    """Which file is at ``path`` (None: none): its device and inode (not its
    modification time, which a host's daily touch changes)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def blob_path(node: str, flags: tuple[str, ...]) -> Path | None:
    """``<node and sources>-<flags>.blob`` in SNAPSHOT_DIR (None: no
    SNAPSHOT_DIR, or no node there)."""
    if SNAPSHOT_DIR is None:
        return None
    try:
        binary = os.stat(node)
    except OSError:
        return None
    built_by = _digest(repr((node, binary.st_size, binary.st_mtime_ns, binary.st_ino,
                             _sources())))
    return SNAPSHOT_DIR / f"{built_by}-{_digest(repr(flags))}.blob"


def build(node: str, flags: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """Builds the blob now and waits for it (the build apart runs the same
    command, and on timeout kills its whole session, not only node)."""
    blob = blob_path(node, flags)
    if blob is None:
        raise FileNotFoundError(node)
    return subprocess.run(_build_argv(node, flags, blob), env=_BUILD_ENV,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=BUILD_TIMEOUT, check=False)


def _build_argv(node: str, flags: tuple[str, ...], blob: Path) -> list[str]:
    return [node, str(_NODE_DIR / "snapshot.mjs"), str(blob), *flags]


def _build_apart(node: str, flags: tuple[str, ...], blob: Path) -> None:
    """Builds in a session of its own (the host's signals are not its), and
    reaps the build: a host exiting first leaves it to finish for others.
    A build past BUILD_TIMEOUT is killed, with every process of its session."""
    try:
        build = subprocess.Popen(_build_argv(node, flags, blob), env=_BUILD_ENV,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:  # then none: guests start from main.mjs
        return
    try:
        build.wait(BUILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(build.pid, signal.SIGKILL)
        build.wait()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@cache
def _sources() -> str:
    """The guest's modules and package.json (its version is read into the
    snapshot), and where they are: the bundle names its modules' paths."""
    digest = hashlib.sha256(str(_NODE_DIR).encode())
    for path in sorted([*_NODE_DIR.glob("*.mjs"), _NODE_DIR / "package.json"]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()
