"""How to start the guest for each language: argv, environment and the
resource limits the host applies to it.

Interpreters are exec'd by absolute path with an explicit environment (no
PATH lookup, no version-manager shims, nothing of the host's environment
unless the caller passes it: an inherited NODE_OPTIONS or
NODE_EXTRA_CA_CERTS would change or slow the guest).
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import cbor2

import tether

from . import confinement
from .limits import Limits

LANGUAGES = ("python", "javascript", "typescript")
GUEST_DIR = Path(__file__).resolve().parent.parent / "guest"
MiB = 1024 * 1024
NODE_MIN_DATA = 64 * MiB

_BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
}


class GuestUnavailable(RuntimeError):
    """The interpreter or the guest's packages for a language are missing."""


@dataclass(frozen=True, slots=True)
class Interpreters:
    """Absolute paths of the interpreters the guests run on."""

    python: str = sys.executable
    node: str | None = None

    def node_path(self) -> str:
        node = self.node or shutil.which("node")
        if node is None:
            raise GuestUnavailable("JavaScript/TypeScript need Node.js >= 20 on PATH "
                                   "(or Runtime(node=...))")
        if not (GUEST_DIR / "node" / "node_modules" / "cbor2").is_dir():
            raise GuestUnavailable(f"the Node guest's npm packages are missing from "
                                   f"{GUEST_DIR / 'node'} (a wheel carries them; in a source "
                                   f"checkout run `make setup`)")
        return str(Path(node).resolve())


@dataclass(frozen=True, slots=True)
class GuestCommand:
    """``seccomp``: the BPF filter the guest runs under (empty: none).
    ``landlock``: under ``process``, the guest is confined with Landlock to
    the system directories, its own files and its work directory.
    ``confines_itself``: the guest takes the confinement options in its
    argv (guest/python/confine.py) instead of being exec'd through it."""

    argv: tuple[str, ...]
    env: dict[str, str]
    seccomp: bytes = b""
    landlock: bool = False
    confines_itself: bool = False


@cache
def _python_paths() -> tuple[str, ...]:
    """Where the shim imports tether and cbor2 from (site-packages is off)."""
    dirs = [Path(module.__file__ or "").resolve().parent.parent for module in (tether, cbor2)]
    return tuple(dict.fromkeys(str(d) for d in dirs))


def guest_env(workdir: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a guest: nothing of the host's but ``extra``.
    PWD too: bwrap sets it in the sandbox, so every profile shows the same."""
    return {**_BASE_ENV, "HOME": workdir, "TMPDIR": workdir, "PWD": workdir, **(extra or {})}


def guest_command(
    language: str,
    workdir: str,
    limits: Limits,
    interpreters: Interpreters,
    env: Mapping[str, str] | None = None,
    *,
    warm: bool = False,
    seccomp: bytes = b"",
) -> GuestCommand:
    """``warm``: the guest will wait in a pool, so it should do before RUN
    whatever work it can (the CPython guest loads asyncio, the Node guest
    runs its own paths once). ``seccomp``: the filter it runs under."""
    full_env = guest_env(workdir, env)
    if language == "python":
        argv = [*_python_argv(interpreters), "--cwd", workdir]
        if warm:
            argv.append("--warm")
    elif language in ("javascript", "typescript"):
        argv = [interpreters.node_path(), "--disable-warning=ExperimentalWarning"]
        if limits.memory_bytes is not None:
            argv.append(f"--max-old-space-size={max(16, limits.memory_bytes // MiB)}")
        argv += [str(GUEST_DIR / "node" / "main.mjs"), "--cwd", workdir]
        if warm:
            argv.append("--warm")
    else:
        raise ValueError(f"unsupported language {language!r}; tether runs: {', '.join(LANGUAGES)}")
    return GuestCommand(tuple(argv), full_env, seccomp, landlock=True,
                        confines_itself=language == "python")


def _python_argv(interpreters: Interpreters) -> list[str]:
    # The real interpreter, not a venv's symlink: the sandbox binds only it,
    # and the guest finds its imports through --path, not a venv.
    argv = [os.path.realpath(interpreters.python), "-I", "-S", "-B",
            str(GUEST_DIR / "python" / "main.py")]
    for path in _python_paths():
        argv += ["--path", path]
    return argv


def zygote_command(workdir: str, mode: str, interpreters: Interpreters,
                   env: Mapping[str, str] | None = None, *,
                   seccomp: bytes = b"") -> GuestCommand:
    """The CPython fork server (host/zygote.py); ``mode`` is isolate or plain.
    The template itself runs unconfined (it makes each run's namespaces);
    the options in its argv are for every guest it forks."""
    argv = (*_python_argv(interpreters), "--zygote", mode,
            *confinement.options(seccomp, landlock=mode == "plain"))
    return GuestCommand(argv, guest_env(workdir, env))


def apply_rlimits(pid: int, language: str, limits: Limits) -> None:
    """Lower the guest's rlimits from outside (prlimit), between its HELLO and
    the RUN, so no program code runs unlimited even in a guest that cannot
    limit itself. Node reserves far more address space than it uses, so it
    gets RLIMIT_DATA instead, and --max-old-space-size for its heap.
    ``processes`` is not an rlimit here: RLIMIT_NPROC counts every process of
    the user (and root ignores it); the namespaces sandbox's pids cgroup
    bounds the run's own tree instead."""
    wire = limits.wire()
    wanted = {
        resource.RLIMIT_CPU: wire.cpu_seconds,
        resource.RLIMIT_NOFILE: wire.open_files,
        resource.RLIMIT_FSIZE: wire.file_bytes,
    }
    if language == "python":
        wanted[resource.RLIMIT_AS] = wire.memory_bytes
    elif wire.memory_bytes is not None:
        # Node reserves address space far beyond what it uses, so RLIMIT_AS
        # would stop it; RLIMIT_DATA bounds what it allocates (heap and
        # Buffers alike). Below ~40 MiB Node hangs instead of failing.
        wanted[resource.RLIMIT_DATA] = max(wire.memory_bytes, NODE_MIN_DATA)
    for which, value in wanted.items():
        if value is None:
            continue
        hard = value + 1 if which == resource.RLIMIT_CPU else value  # SIGXCPU, then SIGKILL
        with contextlib.suppress(OSError, ValueError):
            current = resource.prlimit(pid, which)[1]
            if current != resource.RLIM_INFINITY:
                hard = min(hard, current)
            resource.prlimit(pid, which, (min(value, hard), hard))
