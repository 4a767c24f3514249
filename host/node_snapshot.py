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
build snapshots). The build runs apart from the host (a process of its own
session, left to init, as ``git gc --auto`` detaches), so it never holds
up a run and is nothing the host must reap or stop; it moves the blob into
place only once a guest started from it has said HELLO, so a blob that is
there is one this node accepts.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import threading
import time
from functools import cache
from pathlib import Path

from . import threads
from .paths import GUEST_DIR

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
_TOUCH_EVERY = 24 * 3600.0
_lock = threading.Lock()


def snapshot_blob(node: str, flags: tuple[str, ...]) -> Path | None:
    """The blob for guests started as ``node FLAGS``, or None (then the
    guest starts from main.mjs) while it is built or if it cannot be."""
    blob = blob_path(node, flags)
    if blob is None:
        return None
    if blob.is_file():
        if time.monotonic() - _touched.get(blob, -_TOUCH_EVERY) >= _TOUCH_EVERY:
            with contextlib.suppress(OSError):  # one this user cannot touch still works
                os.utime(blob)  # in use: no build removes it
            _touched[blob] = time.monotonic()
        return blob
    with _lock:
        if blob in _asked:
            return None
        _asked.add(blob)
    # In one of tether's threads: starting a process forks the host, which
    # the event loop calling this need not wait for.
    threads.internal.submit(_build_apart, node, flags, blob)
    return None


def blob_path(node: str, flags: tuple[str, ...]) -> Path | None:
    """``<node and sources>-<flags>.blob`` in SNAPSHOT_DIR (None: no
    SNAPSHOT_DIR, or no node there)."""
    if SNAPSHOT_DIR is None:
        return None
    try:
        stat = os.stat(node)
    except OSError:
        return None
    built_by = _digest(repr((node, stat.st_size, stat.st_mtime_ns, stat.st_ino, _sources())))
    return SNAPSHOT_DIR / f"{built_by}-{_digest(repr(flags))}.blob"


def build(node: str, flags: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """Builds the blob now and waits for it (the build apart runs the same)."""
    blob = blob_path(node, flags)
    if blob is None:
        raise FileNotFoundError(node)
    return subprocess.run(_build_argv(node, flags, blob), env=_BUILD_ENV,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120, check=False)


def _build_argv(node: str, flags: tuple[str, ...], blob: Path) -> list[str]:
    return [node, str(_NODE_DIR / "snapshot.mjs"), str(blob), *flags]


def _build_apart(node: str, flags: tuple[str, ...], blob: Path) -> None:
    """Starts the build in a new session through a shell that exits at once."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):  # then none: main.mjs
        subprocess.run(["/bin/sh", "-c", '"$@" </dev/null >/dev/null 2>&1 &', "sh",
                        *_build_argv(node, flags, blob)],
                       env=_BUILD_ENV, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, start_new_session=True, timeout=10, check=False)


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
