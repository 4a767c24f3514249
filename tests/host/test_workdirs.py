"""A run's work directory is named after its host (host/sandbox/owners.py): those a
host killed with SIGKILL left are removed by the next host's first run, and
a live host's, another PID namespace's and names not of tether's are kept.
Whatever a program left in one, unreadable directories too, is removed."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether import PoolConfig, Runtime
from tether.host.guests.launch import WORKDIR_PREFIX, new_workdir, sweep_workdirs
from tether.host.guests.process import remove_tree
from tether.host.sandbox import owners

#: A host that runs once and then waits with its Runtime open (its pool's
#: guests and template each hold a work directory) until it is killed.
WAITS = """
import asyncio, sys, warnings
warnings.simplefilter("ignore")
import tether
async def main():
    async with tether.Runtime(sandbox="process") as rt:
        result = await rt.run("return 1")
        print(result.status, flush=True)
        await asyncio.sleep(3600)
asyncio.run(main())
"""

RUNS_ONCE = """
import asyncio, warnings
warnings.simplefilter("ignore")
import tether
async def main():
    async with tether.Runtime(sandbox="process") as rt:
        print((await rt.run("return 1")).status)
asyncio.run(main())
"""


def _dead_pid() -> int:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return gone.pid


def test_only_the_directories_of_hosts_that_are_gone_are_removed(tmp_path: Path) -> None:
    namespace = owners.owner().split("-")[0]
    dead = _dead_pid()
    orphan = tmp_path / f"{WORKDIR_PREFIX}{namespace}-{dead}-abc_1"
    kept = [tmp_path / f"{WORKDIR_PREFIX}{owners.owner()}-abc_2",  # this live host's
            tmp_path / f"{WORKDIR_PREFIX}ns1-{dead}-abc_3",  # that pid in another namespace
            tmp_path / f"{WORKDIR_PREFIX}abc_4",  # not a name of ours
            tmp_path / f"other-{namespace}-{dead}-abc_5",
            tmp_path / f"{WORKDIR_PREFIX}{namespace}-\u00b2-abc_6"]  # a digit, not an ASCII one
    for path in (orphan, *kept):
        (path / "sub").mkdir(parents=True)
        (path / "sub" / "file").write_text("x")
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "file").write_text("x")
    (outside / "sub" / "file").chmod(0o644)
    (orphan / "sub" / "link").symlink_to(outside / "sub" / "file")  # a program's, say
    link = tmp_path / f"{WORKDIR_PREFIX}{namespace}-{dead}-abc_7"
    link.symlink_to(outside)  # a link is no directory of a run
    (orphan / "sub").chmod(0)  # what a program made unreadable goes too
    assert sweep_workdirs(str(tmp_path)) == 1
    assert not orphan.exists()
    assert all(path.is_dir() for path in kept)
    assert link.is_symlink() and (outside / "sub" / "file").read_text() == "x"
    assert (outside / "sub" / "file").stat().st_mode & 0o777 == 0o644


@pytest.mark.skipif(os.geteuid() != 0, reason="making another user's directory needs root")
def test_another_users_directories_are_left_alone(tmp_path: Path) -> None:
    namespace = owners.owner().split("-")[0]
    theirs = tmp_path / f"{WORKDIR_PREFIX}{namespace}-{_dead_pid()}-abc_1"
    theirs.mkdir()
    os.chown(theirs, 65534, 65534)
    assert sweep_workdirs(str(tmp_path)) == 0
    assert theirs.is_dir()


def test_a_killed_hosts_work_directories_are_removed_by_the_next_host(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    host = subprocess.Popen([sys.executable, "-c", WAITS], env=env, stdout=subprocess.PIPE,
                            text=True)
    try:
        assert host.stdout is not None
        assert host.stdout.readline().strip() == "ok"
    finally:
        host.send_signal(signal.SIGKILL)
        host.wait()
    mine = f"{WORKDIR_PREFIX}{owners.owner().split('-')[0]}-{host.pid}-"

    def left() -> list[str]:
        return [p.name for p in tmp_path.iterdir() if p.name.startswith(mine)]

    deadline = time.monotonic() + 10  # its guests die with it, then their files stay
    while not left() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left(), "the killed host left no work directory to test with"
    done = subprocess.run([sys.executable, "-c", RUNS_ONCE], env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    assert done.stdout.strip() == "ok"
    deadline = time.monotonic() + 30  # the sweep runs beside the run, in a thread
    while left() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left() == []


def _as_nobody_if_root() -> contextlib.AbstractContextManager[None]:
    """Root reads and removes anything: the files' own permissions only
    count for another user, which root can become for a while (euid)."""
    if os.geteuid() != 0:
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def nobody() -> Iterator[None]:
        os.setegid(65534)
        os.seteuid(65534)
        try:
            yield
        finally:
            os.seteuid(0)
            os.setegid(0)
    return nobody()


def test_what_a_program_made_unreadable_is_removed_too() -> None:
    top = tempfile.mkdtemp(dir="/var/tmp" if os.geteuid() == 0 else None)
    if os.geteuid() == 0:
        os.chown(top, 65534, 65534)
    try:
        with _as_nobody_if_root():
            tree = Path(top) / "run"
            (tree / "a" / "b").mkdir(parents=True)
            (tree / "a" / "b" / "file").write_text("x")
            (tree / "a" / "b").chmod(0)  # as a program may leave it
            (tree / "a").chmod(0o500)
            remove_tree(str(tree))
            assert not tree.exists()
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_a_work_directory_is_made_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mkdir in the temporary directory waits while other runs remove
    theirs there: it runs in one of tether's threads, not on the loop."""
    makers: list[str] = []
    make = tempfile.mkdtemp

    def watched(*args: Any, **kwargs: Any) -> str:
        makers.append(threading.current_thread().name)
        return make(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkdtemp", watched)

    async def go() -> None:
        async with Runtime(sandbox="process", pool=PoolConfig(size=1, fork_server=False)) as rt:
            assert (await rt.run("return 1")).value == 1

    asyncio.run(go())
    assert makers and threading.main_thread().name not in makers


def test_a_cancelled_start_leaves_no_work_directory() -> None:
    """A start cancelled while its directory is made removes it."""
    ours = f"{WORKDIR_PREFIX}{owners.owner()}-*"
    before = set(Path(tempfile.gettempdir()).glob(ours))

    async def go() -> None:
        for _ in range(20):
            made = asyncio.ensure_future(new_workdir())
            await asyncio.sleep(0)
            made.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                remove_tree(await made)  # it finished before the cancellation came

    asyncio.run(go())
    assert set(Path(tempfile.gettempdir()).glob(ours)) <= before
