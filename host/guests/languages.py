"""How to start the guest for each language: its argv and environment
(the limits applied to a started guest are host/guests/launch.py).

Interpreters are exec'd by absolute path with an explicit environment (no
PATH lookup, no version-manager shims, nothing of the host's environment
unless the caller passes it: an inherited NODE_OPTIONS or
NODE_EXTRA_CA_CERTS would change or slow the guest).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import cbor2

from ..limits import Limits
from ..sandbox import confinement
from ..sandbox.paths import GUEST_DIR, PACKAGE_DIR
from .node_snapshot import snapshot_blob

LANGUAGES = ("python", "javascript", "typescript")
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
        modules = GUEST_DIR / "node" / "node_modules"
        if not all((modules / name).is_dir() for name in ("acorn", "amaro")):
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
    #: Host paths the sandbox binds read-only at the same place (packages).
    binds: tuple[str, ...] = ()
    #: The startup snapshot a Node guest starts from (host/guests/node_snapshot.py).
    snapshot: Path | None = None


@dataclass(frozen=True, slots=True)
class Packages:
    """Third-party packages programs may import: ``python``, a
    site-packages directory; ``node``, a ``node_modules`` directory;
    ``preload``, modules the CPython template (and warm guests) import
    before any run."""

    python: str | None = None
    node: str | None = None
    preload: tuple[str, ...] = ()

    @classmethod
    def prepare(cls, python: str | os.PathLike[str] | None, node: str | os.PathLike[str] | None,
                preload: Sequence[str], interpreter: str) -> Packages:
        """Check and resolve the Runtime's arguments; raises ValueError."""
        if isinstance(preload, str) or not all(
                isinstance(m, str) and all(part.isidentifier() for part in m.split("."))
                for m in preload):
            raise ValueError("preload must be a sequence of module names, e.g. ('pandas',)")
        return cls(python=None if python is None else site_packages(python, interpreter),
                   node=None if node is None else node_modules(node),
                   preload=tuple(preload))

    def python_modules(self) -> tuple[str, ...]:
        """The top-level modules programs can import from ``python`` (for
        describing a Runtime to a model), private names left out."""
        if self.python is None:
            return ()
        import pkgutil

        places = [self.python]
        for pth in sorted(Path(self.python).glob("*.pth")):  # what site.addsitedir adds
            for raw in pth.read_text(errors="replace").splitlines():
                line = raw.strip()
                if line and not line.startswith(("#", "import ", "import\t")):
                    places.append(str(Path(self.python, line)))
        return tuple(sorted({m.name for m in pkgutil.iter_modules(places)
                             if not m.name.startswith("_")}))

    def node_modules(self) -> tuple[str, ...]:
        """The packages programs can ``require`` from ``node`` (``@scope/name``
        for scoped ones), hidden directories left out."""
        if self.node is None:
            return ()
        names = []
        for entry in sorted(Path(self.node).iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.name.startswith("@") and entry.is_dir():
                names += [f"{entry.name}/{sub.name}" for sub in sorted(entry.iterdir())]
            elif entry.is_dir():
                names.append(entry.name)
        return tuple(names)


def site_packages(path: str | os.PathLike[str], interpreter: str) -> str:
    """The site-packages directory of ``path``: a virtual environment (its
    ``lib/pythonX.Y/site-packages`` for the guests' interpreter's X.Y) or a
    site-packages directory itself."""
    root = Path(path).resolve()
    if not root.is_dir():
        raise ValueError(f"python_packages: {root} is not a directory")
    if not (root / "pyvenv.cfg").exists():
        return str(root)
    version = _python_version(interpreter)
    candidates = sorted(root.glob("lib/python3*/site-packages"))
    for candidate in candidates:
        if candidate.parent.name == f"python{version}":
            return str(candidate)
    found = ", ".join(c.parent.name for c in candidates) or "none"
    raise ValueError(f"python_packages: the virtual environment {root} has no site-packages "
                     f"for Python {version} (found: {found})")


@cache
def _python_version(interpreter: str) -> str:
    if os.path.realpath(interpreter) == os.path.realpath(sys.executable):
        return f"{sys.version_info[0]}.{sys.version_info[1]}"
    import subprocess

    out = subprocess.run([interpreter, "-I", "-S", "-c",
                          "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True, check=True, timeout=30)
    return out.stdout.strip()


def node_modules(path: str | os.PathLike[str]) -> str:
    """The ``node_modules`` directory of ``path`` (a prepared directory that
    holds one, or that directory itself)."""
    root = Path(path).resolve()
    if root.name != "node_modules":
        root = root / "node_modules"
    if not root.is_dir():
        raise ValueError(f"node_packages: {root} is not a directory")
    return str(root)


@cache
def _python_paths() -> tuple[str, ...]:
    """Where the shim imports tether and cbor2 from (site-packages is off)."""
    dirs = [PACKAGE_DIR.resolve().parent, Path(cbor2.__file__).resolve().parent.parent]
    return tuple(dict.fromkeys(str(d) for d in dirs))


@dataclass(frozen=True, slots=True)
class GuestSetup:
    """What every guest of a Runtime shares, handed to each command as one
    value: the ``interpreters``, the variables ``env`` adds to a guest's
    environment, the ``seccomp`` filter it runs under (empty: none) and the
    third-party ``packages`` programs may import."""

    interpreters: Interpreters = Interpreters()
    env: Mapping[str, str] = field(default_factory=dict)
    seccomp: bytes = b""
    packages: Packages = Packages()


def guest_env(workdir: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a guest: nothing of the host's but ``extra``.
    PWD too: bwrap sets it in the sandbox, so every profile shows the same."""
    return {**_BASE_ENV, "HOME": workdir, "TMPDIR": workdir, "PWD": workdir, **(extra or {})}


def guest_command(language: str, workdir: str, limits: Limits,
                  setup: GuestSetup = GuestSetup(),
                  *, warm: bool = False) -> GuestCommand:
    """``warm``: the guest will wait in a pool, so it should do before RUN
    whatever work it can (the CPython guest loads asyncio and the modules to
    preload, the Node guest runs its own paths once, and a TypeScript one
    loads the type stripper)."""
    interpreters, seccomp, packages = setup.interpreters, setup.seccomp, setup.packages
    full_env = guest_env(workdir, setup.env)
    binds: tuple[str, ...]
    blob = None
    if language == "python":
        argv = [*_python_argv(interpreters, packages), "--cwd", workdir]
        if warm:
            argv.append("--warm")
            for module in packages.preload:
                argv += ["--preload", module]
        binds = (packages.python,) if packages.python else ()
    elif language in ("javascript", "typescript"):
        node = interpreters.node_path()
        flags = node_flags(limits)
        argv = [node, *flags]
        binds = ()
        # V8 refuses a snapshot built under other options: the caller's
        # NODE_OPTIONS are not those it was built with.
        blob = None if "NODE_OPTIONS" in full_env else snapshot_blob(node, flags)
        if blob is not None:  # main.mjs stays argv[1], as the program sees it either way
            argv += ["--snapshot-blob", str(blob), "--"]
            binds = (str(blob.parent),)
        argv += [str(GUEST_DIR / "node" / "main.mjs"), "--cwd", workdir]
        if warm:  # a pool's guests are of one language: TypeScript's load the stripper ahead
            argv += ["--warm", "--typescript"] if language == "typescript" else ["--warm"]
        if packages.node:  # the program's require() looks there last (NODE_PATH)
            full_env["NODE_PATH"] = packages.node
            binds += (packages.node,)
    else:
        raise ValueError(f"unsupported language {language!r}; tether runs: {', '.join(LANGUAGES)}")
    return GuestCommand(tuple(argv), full_env, seccomp, landlock=True,
                        confines_itself=language == "python", binds=binds, snapshot=blob)


def node_flags(limits: Limits) -> tuple[str, ...]:
    """Node's options for a guest under ``limits`` (a startup snapshot is
    built with the same: V8 refuses one built with other V8 flags)."""
    flags: tuple[str, ...] = ("--disable-warning=ExperimentalWarning",)
    if limits.memory_bytes is not None:
        flags += (f"--max-old-space-size={max(16, limits.memory_bytes // MiB)}",)
    return flags


def _python_argv(interpreters: Interpreters, packages: Packages) -> list[str]:
    # The real interpreter, not a venv's symlink: the sandbox binds only it,
    # and the guest finds its imports through --path, not a venv.
    argv = [os.path.realpath(interpreters.python), "-I", "-S", "-B",
            str(GUEST_DIR / "python" / "main.py")]
    for path in _python_paths():
        argv += ["--path", path]
    if packages.python:
        argv += ["--packages", packages.python]
    return argv


def zygote_command(workdir: str, mode: str, setup: GuestSetup) -> GuestCommand:
    """The CPython fork server (host/guests/zygote.py); ``mode`` is its profile,
    ``namespaces`` or ``process``.
    The template itself runs unconfined (it makes each run's namespaces);
    the options in its argv are for every guest it forks."""
    interpreters, seccomp, packages = setup.interpreters, setup.seccomp, setup.packages
    binds = (packages.python,) if packages.python else ()
    argv = [*_python_argv(interpreters, packages), "--zygote", mode,
            *confinement.options(seccomp, landlock=mode == "process", read=binds)]
    for module in packages.preload:
        argv += ["--preload", module]
    return GuestCommand(tuple(argv), guest_env(workdir, setup.env), binds=binds)
