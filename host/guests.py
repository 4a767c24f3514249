"""How to start the guest for each language: argv and environment.

Computed once per process; the interpreter is exec'd by absolute path with an
explicit environment (no PATH lookup, no version-manager shims, nothing of
the host's environment unless the caller passes it).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import cbor2

import tether

LANGUAGES = ("python",)

_BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
}


@dataclass(frozen=True, slots=True)
class GuestCommand:
    argv: tuple[str, ...]
    env: dict[str, str]


@cache
def _python_paths() -> tuple[str, ...]:
    """Where the shim imports tether and cbor2 from (site-packages is off)."""
    dirs = [Path(module.__file__ or "").resolve().parent.parent for module in (tether, cbor2)]
    return tuple(dict.fromkeys(str(d) for d in dirs))


def guest_command(
    language: str, workdir: str, *, python: str | None = None, env: Mapping[str, str] | None = None
) -> GuestCommand:
    if language != "python":
        raise ValueError(f"unsupported language {language!r}; tether runs: {', '.join(LANGUAGES)}")
    shim = Path(__file__).resolve().parent.parent / "guest" / "python" / "main.py"
    argv = [python or sys.executable, "-I", "-S", "-B", str(shim), "--cwd", workdir]
    for path in _python_paths():
        argv += ["--path", path]
    full_env = {**_BASE_ENV, "HOME": workdir, "TMPDIR": workdir}
    if env:
        full_env.update(env)
    return GuestCommand(tuple(argv), full_env)
