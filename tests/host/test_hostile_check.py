"""The check before a run, attacked: the program it reads is untrusted, so
it reads it as a guest would run it, confined, off the event loop, with a
deadline from the request and processes that do not grow without bound
(docs/security.md, "The check before a run"). Real checkers throughout."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether import Limits, Runtime, Status
from tether.host.check.checker import CHECK_TIMEOUT, MAX_CHECK_SOURCE_BYTES, Checker
from tether.host.sandbox.profiles import detect

pytestmark = pytest.mark.filterwarnings("ignore:tether. sandbox='process'")

#: Every profile this machine offers: the checker is confined under each.
PROFILES = ["process", *(["namespaces"] if detect().namespaces else [])]
#: A TypeScript program whose check takes longer than any deadline: three
#: times, each element of a ~1000-tuple paired with every other (each takes
#: the compiler seconds; together, more memory than its heap holds).
SLOW_TYPESCRIPT = """\
type Rep<T, N extends number, A extends unknown[] = []> = A['length'] extends N ? A : Rep<T, N, [...A, T]>;
type Pairs<X extends unknown[]> = { [K in keyof X]: { [J in keyof X]: [X[K], X[J]] } };
const p: Pairs<Rep<string, 999>> = null as any;
const q: number = p;
const p2: Pairs<Rep<number, 998>> = null as any;
const q2: number = p2;
const p3: Pairs<Rep<boolean, 997>> = null as any;
const q3: number = p3;
"""


def patient(rt: Runtime) -> Runtime:
    """``rt`` with a deadline for its checks that a loaded machine meets (a
    compiler's start-up counts in it): where the deadline is not what a
    test is about."""
    rt._checker = Checker(rt._interpreters, seccomp=rt._seccomp, packages=rt._packages,
                          timeout=120)
    return rt


def checks(*requests: tuple[str, str], **runtime: Any) -> list[Any]:
    """``Runtime.check`` of each (source, language), one after another."""
    async def go() -> list[Any]:
        async with patient(Runtime(pool=None, **runtime)) as rt:
            return [await rt.check(source, language=language) for source, language in requests]

    return asyncio.run(go())


def messages(found: Any) -> list[str]:
    return [f"{d.type}: {d.message}" for d in found]


# -- 1. the check reads none of the host's files -------------------------------------


@pytest.mark.parametrize("sandbox", PROFILES)
def test_the_typescript_check_reads_no_file_of_the_host(tmp_path: Path, sandbox: str) -> None:
    """A program that names a file of the host learns neither its contents
    (a literal in a diagnostic) nor whether it exists."""
    secret = f"sk-live-{uuid.uuid4().hex}"
    (tmp_path / "settings.d.ts").write_text(f'export declare const key: "{secret}";\n')
    (tmp_path / "config.js").write_text(
        f'module.exports = /** @type {{const}} */ ({{ key: "{secret}" }});\n')
    programs = {
        "typescript": 'type S = typeof import("{}");\nconst k: number = null as unknown as S["key"];',
        "javascript": 'const c = require("{}");\nc.key.nope();',
    }
    for language, program in programs.items():
        name = "settings" if language == "typescript" else "config.js"
        there, missing = checks((program.format(tmp_path / name), language),
                                (program.format(tmp_path / f"missing-{name}"), language),
                                sandbox=sandbox)
        assert there.checked and missing.checked, (there.reason, missing.reason)
        assert not any(secret in m for m in messages(there)), messages(there)
        assert [m.replace("missing-", "") for m in messages(missing)] == messages(there)


@pytest.fixture
def host_module(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """An interpreter (a virtual environment's) whose site-packages holds a
    module of the host's settings, and one a ``.pth`` file adds: what a
    program must not read through the check."""
    secret = f"sk-live-{uuid.uuid4().hex}"
    root = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    [site] = root.glob("lib/python3*/site-packages")
    (site / "host_app_settings.py").write_text(f'OPENAI_API_KEY = "{secret}"\n')
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "host_other_settings.py").write_text(f'TOKEN = "{secret}"\n')
    (site / "elsewhere.pth").write_text(str(tmp_path / "elsewhere") + "\n")
    yield root / "bin" / "python", secret


@pytest.mark.parametrize("sandbox", PROFILES)
def test_the_python_check_resolves_no_module_of_the_host(
        host_module: tuple[Path, str], sandbox: str) -> None:
    python, secret = host_module
    found = checks(("import host_app_settings as s\nk: int = s.OPENAI_API_KEY", "python"),
                   ("import host_other_settings as s\nk: int = s.TOKEN", "python"),
                   ("import no_such_module as s\nk: int = s.X", "python"),
                   python=str(python), sandbox=sandbox)
    for problems in found:
        assert problems.checked, problems.reason
        assert not any(secret in m for m in messages(problems)), messages(problems)
        # As a module that exists nowhere: not found, nothing else said.
        assert [d.type for d in problems] == ["import-not-found"], messages(problems)


def test_the_python_check_resolves_the_declared_packages(host_module: tuple[Path, str]) -> None:
    """What a run may import, the check reads: ``python_packages``."""
    python, secret = host_module
    [found] = checks(("import host_app_settings as s\nk: int = s.OPENAI_API_KEY", "python"),
                     python=str(python), python_packages=python.parent.parent)
    assert found.checked, found.reason
    # The run may read it, so may the check.
    assert [d.type for d in found] == ["invalid-assignment"], messages(found)
    assert secret in found[0].message


# -- 2. nothing of the program is read on the event loop -----------------------------


def test_a_large_program_does_not_hold_the_event_loop() -> None:
    """The check of a program as large as the check reads: the loop's own
    thread spends next to no CPU time on it (it was parsed, tokenized and
    laid out there), and a neighbour run with a short timeout ends with its
    own status while the check goes on."""
    line = "x = [" + ", ".join(str(i) for i in range(60)) + "]\n"
    source = line * (MAX_CHECK_SOURCE_BYTES // len(line))
    assert len(source) <= MAX_CHECK_SOURCE_BYTES

    async def go() -> tuple[float, Any, bool, Any]:
        async with patient(Runtime(pool=None)) as rt:
            await rt.check("x = 1")  # the checker's own start-up is not what is measured
            before = time.thread_time()
            check = asyncio.ensure_future(rt.check(source))
            neighbour = await rt.run("while True:\n    pass",
                                     limits=Limits(timeout=1.0, kill_grace=0.2))
            pending = not check.done()
            found = await check
            return time.thread_time() - before, neighbour, pending, found

    spent, neighbour, pending, found = asyncio.run(go())
    assert neighbour.status is Status.TIMEOUT, neighbour
    assert pending
    assert found.checked, found.reason
    assert spent < 0.5, f"the loop's thread spent {spent:.2f} s of CPU"


def test_a_program_over_the_checks_size_runs_unchecked_and_says_so() -> None:
    source = "x = 1\n" * (MAX_CHECK_SOURCE_BYTES // 6 + 1) + "return x"

    async def go() -> Any:
        async with Runtime(pool=None) as rt:
            return await rt.run(source, check=True)

    result = asyncio.run(go())
    assert (result.status, result.value) == (Status.OK, 1), result
    assert result.check is not None and not result.check.checked
    assert str(MAX_CHECK_SOURCE_BYTES) in result.check.reason


# -- 3. a slow check holds no other ------------------------------------------------------


def test_a_slow_typescript_check_does_not_delay_an_honest_one() -> None:
    """A check that runs out of time, then an honest one: it is answered,
    checked, while the slow one still runs (it waited for no lock of its)."""
    async def go() -> tuple[list[str], Any, list[Any]]:
        async with patient(Runtime(pool=None)) as rt:
            # Two compilers started, however slowly; then every check's deadline.
            await asyncio.gather(*(rt.check("1", language="typescript") for _ in range(2)))
            rt._checker._timeout = CHECK_TIMEOUT
            ended: list[str] = []

            async def check(name: str, source: str) -> Any:
                found = await rt.check(source, language="typescript")
                ended.append(name)
                return found

            hostile = [asyncio.ensure_future(check("slow", SLOW_TYPESCRIPT))]
            await asyncio.sleep(0)
            honest = await check("honest", "const n: number = 'a'")
            return ended, honest, await asyncio.gather(*hostile)

    ended, honest, hostile = asyncio.run(go())
    assert ended[0] == "honest", ended
    assert honest.checked and [d.type for d in honest] == ["TS2322"], honest
    # Out of time (or, on a fast machine, out of the compiler's heap first).
    assert all(not found.checked for found in hostile), hostile


def test_a_slow_python_check_is_given_up_at_its_deadline() -> None:
    """A deadline counts from the request: a check that waited for a
    checker process has less of it left, and one that ran out is "not
    checked", whatever held it."""
    async def go() -> list[Any]:
        checker = Checker(Runtime(pool=None)._interpreters, timeout=0.001)
        try:
            return [await checker.check("x = 1", "python", ()) for _ in range(2)]
        finally:
            await checker.aclose()

    for found in asyncio.run(go()):
        assert not found.checked and "in time" in found.reason, found


# -- 4. the TypeScript compiler does not grow without bound -------------------------


def test_a_typescript_checker_is_retired_past_its_memory_bound() -> None:
    """Its memory grows with what it reads and caches: past the bound it
    is replaced by a new process, and checks go on being answered."""
    async def go() -> tuple[list[Any], int]:
        async with Runtime(pool=None) as rt:
            # Every check passes the bound; a loaded machine's start-ups meet the deadline.
            rt._checker = Checker(rt._interpreters, retire_bytes=1, timeout=120)
            found = [await rt.check("const n: number = 'a'", language="typescript")
                     for _ in range(3)]
            return found, rt._checker.started("typescript")

    found, started = asyncio.run(go())
    assert all(f.checked and [d.type for d in f] == ["TS2322"] for f in found), found
    assert started == 3


# -- 5. a checker's process ends with the loop that started it ------------------------


@pytest.mark.parametrize("sandbox", PROFILES)
def test_a_checker_whose_close_was_cancelled_midway_is_still_closed(sandbox: str) -> None:
    """A loop shutting down (the end of asyncio.run) cancels a checker's
    close while it waits for the process to die, and the pool's close
    then begins it again: that one ends, and the process is gone."""
    async def go() -> tuple[int, bool]:
        rt = patient(Runtime(pool=None, sandbox=sandbox))
        await rt.check("x: int = 1")
        (pool,) = rt._checker._pools.values()
        process = await pool._start()
        closing = asyncio.create_task(process.close())
        while process._closed is None:
            await asyncio.sleep(0)
        await asyncio.sleep(0)  # it has killed the process and waits for its end
        for task in (closing, process._closed):  # as the loop's shutdown cancels each
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await closing
        await asyncio.wait_for(rt.aclose(), 60)
        return process.guest.child.pid, process.guest.child.exited.done()

    pid, exited = asyncio.run(go())
    assert exited
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
