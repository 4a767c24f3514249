"""The process profile (no namespaces): the baseline the sandbox builds on.
The rest of the host tests run under the default, namespaces where available."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import warnings

import pytest

from tether import RunResult, Runtime, Sandbox, SandboxUnavailable, Status
from tether.host.guests import process as process_module
from tether.host.sandbox import profiles as sandbox_module

from .conftest import SPIN, no_marked_processes, pick, quick, run


def process(source: str, **kwargs: object) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "as root" is expected here
        return run(source, sandbox="process", **kwargs)


def test_hello(lang: str) -> None:
    result = process(pick(lang, python="print('hi')\nreturn 1", javascript="console.log('hi')\nreturn 1"),
                     language=lang)
    assert (result.status, result.value, result.stats.sandbox) == (Status.OK, 1, "process")  # type: ignore[attr-defined]


def test_timeout_kills_the_process_group(lang: str) -> None:
    from .test_endings import SPAWN_STUBBORN

    result = process(SPAWN_STUBBORN[lang] + SPIN[lang], language=lang,
                     limits=quick(timeout=1))
    assert result.status is Status.TIMEOUT  # type: ignore[attr-defined]
    assert json.loads(result.output)["pid"]  # type: ignore[attr-defined]
    assert no_marked_processes()


def test_memory_limit(lang: str) -> None:
    source = pick(lang, python="x = []\nwhile True:\n    x.append(bytearray(1 << 20))",
                  javascript="const a = []\nwhile (true) a.push(new Array(1e6).fill(1.5))")
    result = process(source, language=lang, limits=quick(memory_bytes=256 << 20, timeout=30))
    assert (result.status, result.limit) == (Status.LIMIT, "memory_bytes")  # type: ignore[attr-defined]


def test_asking_for_namespaces_where_there_are_none_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    missing = sandbox_module.Support(None, False, "bwrap is not installed",
                                     sandbox_module.cgroups.available())
    monkeypatch.setattr(sandbox_module, "detect", lambda: missing)
    with pytest.raises(SandboxUnavailable, match="bwrap is not installed"):
        Runtime(sandbox="namespaces")
    with pytest.warns(RuntimeWarning, match="not a security boundary"), \
            warnings.catch_warnings():
        warnings.filterwarnings("ignore", "tether: sandbox='process' as root")
        assert Runtime(sandbox="auto").sandbox is Sandbox.PROCESS


@pytest.mark.skipif(sandbox_module.cgroups.available().version is None,
                    reason=sandbox_module.cgroups.available().detail)
@pytest.mark.filterwarnings("ignore:tether. sandbox='process'")
def test_a_setsid_escapee_dies_with_its_cgroup(lang: str) -> None:
    """The profile's process-group kill misses a setsid()-ed descendant; the
    run's cgroup holds it all the same, so it is killed, and the group removed."""
    from .test_hostile import ESCAPEE

    source = ESCAPEE[lang] + pick(
        lang, python="return open('/proc/self/cgroup').read()",
        javascript="return require('fs').readFileSync('/proc/self/cgroup', 'utf8')")

    async def go() -> RunResult:
        async with Runtime(sandbox="process") as rt:  # closing it finishes every teardown
            return await rt.run(source, language=lang, limits=quick())

    result = asyncio.run(go())
    assert result.status is Status.OK, result.error
    assert no_marked_processes()
    groups = [line.split(":", 2) for line in result.value.splitlines()]
    path = next(path for _, controllers, path in groups if "pids" in controllers.split(","))
    root = sandbox_module.cgroups.ROOT
    assert not (root / "pids" / path.lstrip("/")).exists()
    assert not (root / path.lstrip("/")).exists()


def test_the_wait_for_a_group_to_die_scans_proc_off_the_event_loop(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading a dying process's /proc stat can wait on its exit, so the
    scan for a group's live members runs in one of tether's threads."""
    scanners: list[str] = []
    scan = process_module._live_members

    def watched(pgid: int) -> bool:
        scanners.append(threading.current_thread().name)
        return scan(pgid)

    monkeypatch.setattr(process_module, "_live_members", watched)
    member = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                              start_new_session=True)
    try:
        asyncio.run(process_module._until_group_dead(member.pid, 0.05))
    finally:
        member.kill()
        member.wait()
    assert scanners and threading.main_thread().name not in scanners
