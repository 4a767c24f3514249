"""Where tether's own files are on the host: the package as it is
imported, the guests' sources, and the host paths a guest must be able
to read (bound by the sandbox, allowed by Landlock)."""

from __future__ import annotations

import shutil
import sys
from functools import cache
from pathlib import Path

import cbor2

#: The ``tether`` package directory as it is imported (``tether/host/sandbox/../..``).
PACKAGE_DIR = Path(__file__).parents[2]
#: The guests' sources (``guest/``), links resolved.
GUEST_DIR = Path(__file__).resolve().parents[2] / "guest"


@cache
def guest_binds() -> tuple[str, ...]:
    """Host paths a guest needs, bound read-only at the same place inside:
    the interpreters' prefixes and tether's and cbor2's package directories
    (with the targets of tether's symlinked subpackages)."""
    paths = {sys.base_prefix, str(Path(cbor2.__file__).resolve().parent)}
    paths.add(str(PACKAGE_DIR))
    for sub in ("codec", "guest"):
        paths.add(str((PACKAGE_DIR / sub).resolve()))
    node = shutil.which("node")
    if node is not None:
        paths.add(str(Path(node).resolve().parent.parent))
    return tuple(sorted(p for p in paths if not p.startswith("/usr/")))
