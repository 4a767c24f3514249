"""``tether doctor``: what this machine offers for running programs."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
import warnings

from .host import Limits, PoolConfig, Runtime
from .host.check.checker import CHECK_TIMEOUT, Checker
from .host.guests.languages import GuestUnavailable, Interpreters
from .host.sandbox import confinement, seccomp
from .host.sandbox.profiles import detect
from .host.sandbox.seccomp import SyscallFilter

#: Run in a guest: its seccomp mode, and whether it can signal its parent
#: (under ``process``, the host; Landlock's signal scoping refuses it).
_PROBE = """
import os
mode = open('/proc/self/status').read().split('Seccomp:')[1].split()[0]
try:
    os.kill(os.getppid(), 0)
    parent = 'signalable'
except PermissionError:
    parent = 'not signalable (Landlock scope)'
return [mode, parent]
"""


def _line(name: str, value: str) -> None:
    print(f"  {name:22} {value}")


#: A program each checker must refuse, and what it says about it.
_MISTYPED = {"python": ("n: int = 'a'", "invalid-assignment"),
             "javascript": ("const n: number = 'a'", "TS2322")}


async def _checks(languages: list[str]) -> None:
    """Whether the check before a run works for each language: a mistyped
    program checked in a confined checker, as a run would have it."""
    print("  the check before a run (run(check=True)):")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        runtime = Runtime(pool=None)
    # Whether it works, however long it takes here: how long is said.
    runtime._checker = Checker(runtime._interpreters, seccomp=runtime._seccomp, timeout=120)
    async with runtime:
        for language in ("python", "javascript"):
            name = "python check" if language == "python" else "javascript check"
            if language not in languages:
                _line(name, "unavailable: no Node.js (see above)")
                continue
            source, expected = _MISTYPED[language]
            start = time.perf_counter()
            found = await runtime.check(source, language="typescript"
                                        if language == "javascript" else language)
            took = (time.perf_counter() - start) * 1000
            if not found.checked:
                _line(name, f"unavailable: {found.reason}")
            elif [d.type for d in found] != [expected]:
                _line(name, f"FAILED: {[d.message for d in found]}")
            else:
                slow = f", over the {CHECK_TIMEOUT:g} s a check may take: programs run " \
                    "unchecked" if took > CHECK_TIMEOUT * 1000 else ""
                _line(name, f"available under {runtime.sandbox}: {_checker(language)}, "
                      f"a first check {took:.0f} ms{slow}")


def _checker(language: str) -> str:
    if language == "python":
        from ty import find_ty_bin

        return subprocess.run([find_ty_bin(), "--version"], capture_output=True, text=True,
                              check=False).stdout.strip()
    return "the TypeScript compiler"


async def doctor(repeat: int) -> int:
    if repeat < 1:  # each figure is a median of ``repeat`` starts
        raise ValueError("repeat must be at least 1")
    support = detect()
    print("tether doctor")
    _line("python", f"{os.path.realpath(sys.executable)} ({platform.python_version()})")
    try:
        node = Interpreters().node_path()
        version = subprocess.run([node, "--version"], capture_output=True, text=True,
                                 check=False).stdout.strip()
        _line("node", f"{node} ({version}), guest packages installed")
        languages = ["python", "javascript"]
    except GuestUnavailable as exc:
        _line("node", f"unavailable: {exc}")
        languages = ["python"]
    _line("bwrap", support.bwrap or "not installed")
    _line("namespaces sandbox", "available" if support.namespaces else
          f"unavailable: {support.detail}")
    _line("cgroups", support.cgroups.detail)
    unavailable = seccomp.available()
    _line("seccomp filter", f"unavailable: {unavailable}" if unavailable else
          f"on by default in every profile: {len(SyscallFilter().denied())} calls denied "
          f"or restricted")
    abi = confinement.landlock_version()
    _line("landlock", "unavailable: sandbox='process' confines no files, signals or sockets"
          if abi == 0 else f"ABI {abi}: sandbox='process' confines files"
          + (", TCP" if abi >= 4 else "")
          + (", signals and abstract sockets" if abi >= 6 else
             "; no signal scoping (ABI 6): os.kill(-1, 9) reaches the machine"))
    _line("running as root", "yes" if os.geteuid() == 0 else "no")
    if os.geteuid() == 0:
        _line("", "sandbox='process' would run programs as root: use namespaces")

    profiles = ["process"] + (["namespaces"] if support.namespaces else [])
    await _checks(languages)
    print("  what a guest reports about itself (seccomp mode 2 is a filter):")
    for profile in profiles:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            runtime = Runtime(sandbox=profile, pool=None, limits=Limits(timeout=30))
        async with runtime:
            result = await runtime.run(_PROBE)
        if not result.ok:
            _line(profile, f"FAILED: {result.error}")
            return 1
        mode, parent = result.value if isinstance(result.value, list) else ("?", "?")
        _line(profile, f"seccomp mode {mode!s}"
              + (f", the host {parent!s}" if profile == "process" else ""))
    print(f"  cold start of a hello run (median of {repeat}):")
    for profile in profiles:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            runtime = Runtime(sandbox=profile, pool=None, limits=Limits(timeout=30))
        async with runtime:
            for language in languages:
                samples = []
                for _ in range(repeat):
                    start = time.perf_counter()
                    result = await runtime.run("return 42", language=language)
                    samples.append(time.perf_counter() - start)
                    if not result.ok:
                        _line(f"{profile} {language}", f"FAILED: {result.error}")
                        return 1
                _line(f"{profile} {language}", f"{statistics.median(samples) * 1000:.1f} ms")
    print(f"  Python hello forked from the template at the run (median of {repeat}):")
    for profile in profiles:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            runtime = Runtime(sandbox=profile, pool=PoolConfig(size=0), limits=Limits(timeout=30))
        async with runtime:
            samples = []
            for _ in range(repeat + 1):  # the first run starts the template
                start = time.perf_counter()
                result = await runtime.run("return 42")
                samples.append(time.perf_counter() - start)
            forked = runtime._zygotes[runtime.sandbox].alive
            _line(f"{profile} python", f"{statistics.median(samples[1:]) * 1000:.1f} ms"
                  if result.ok and forked else "FAILED: guests start as new interpreters "
                  "(see the log)")
    return 0

