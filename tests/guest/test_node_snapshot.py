"""R-RUN-5: Node guests started from a startup snapshot of a guest that never
received a RUN (host/guests/node_snapshot.py) run programs as guests started from
main.mjs do, in both sandbox profiles; until the snapshot is built, and
where it cannot be, guests start from main.mjs and runs do not depend on it."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tether import Limits, PoolConfig, Runtime, Status
from tether.host.guests import node_snapshot
from tether.host.guests.languages import Interpreters, guest_command, node_flags
from tether.host.sandbox.profiles import detect

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")

PROGRAM = """
const fs = require('node:fs')
const { sep } = await import('node:path')
console.log('hi', typeof fs.readFileSync, sep)
return [await add(1, 2), process.argv.slice(2, 3)]
"""


@pytest.fixture
def snapshots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "snapshots"
    monkeypatch.setattr(node_snapshot, "SNAPSHOT_DIR", where)
    monkeypatch.setattr(node_snapshot, "_asked", set())
    monkeypatch.setattr(node_snapshot, "_touched", {})
    monkeypatch.setattr(node_snapshot, "_refused", {})
    monkeypatch.setattr(node_snapshot, "_condemned", set())
    return where


def _argv(limits: Limits | None = None) -> tuple[str, ...]:
    return guest_command("javascript", "/nonexistent", limits or Limits()).argv


async def _add(a: int, b: int) -> int:
    return a + b


async def _runs(sandbox: str) -> list[Any]:
    async with Runtime(sandbox=sandbox) as rt:
        hello = await rt.run(PROGRAM, language="javascript", bindings={"add": _add})
        typed = await rt.run("const n: number = 41\nreturn n + 1", language="typescript")
        names = await rt.run("let y = x + 1", language="javascript", variables={"x": 1})
        last = await rt.run("1 + 1", language="javascript", last_expression=True)
        failed = await rt.run("null.x", language="javascript")
    assert failed.status is Status.ERROR and failed.error is not None
    return [hello.status, hello.output, hello.value, typed.value, names.variables, last.value,
            failed.error.type, failed.error.line]


def _profiles() -> list[str]:
    return ["process", "namespaces"] if detect().bwrap is not None else ["process"]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("sandbox", _profiles())
def test_a_guest_started_from_the_snapshot_runs_programs(snapshots: Path, sandbox: str) -> None:
    node = Interpreters().node_path()
    built = node_snapshot.build(node, node_flags(Limits()))
    assert built.returncode == 0, built.stderr
    argv = _argv()
    assert "--snapshot-blob" in argv and str(snapshots) in argv[argv.index("--snapshot-blob") + 1]
    assert asyncio.run(_runs(sandbox)) == [
        Status.OK, "hi function /\n", [3, []], 42, {"x": 1, "y": 2}, 2, "TypeError", 1]


def test_a_guest_with_node_options_of_its_own_starts_from_main(snapshots: Path) -> None:
    """V8 refuses a snapshot built under other options (node exits 14): a
    Runtime whose env sets NODE_OPTIONS starts its guests from main.mjs."""
    built = node_snapshot.build(Interpreters().node_path(), node_flags(Limits()))
    assert built.returncode == 0, built.stderr
    assert "--snapshot-blob" in _argv()

    async def go() -> Any:
        async with Runtime(env={"NODE_OPTIONS": "--max-semi-space-size=32"}) as rt:
            return await rt.run("return 1 + 1", language="javascript")

    result = asyncio.run(go())
    assert (result.status, result.value) == (Status.OK, 2), result.error


#: What node refuses to start from: a blob cut short (node exits 14), and
#: one that is not a blob at all (node aborts).
DAMAGED = {"cut short": lambda blob: blob.read_bytes()[:100_000], "not a blob": lambda _: b"x" * 64}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("pool", [None, PoolConfig(prestart=("javascript",))],
                         ids=["cold", "warm"])
@pytest.mark.parametrize("damage", DAMAGED)
def test_a_blob_node_refuses_is_removed_and_its_guest_starts_from_main(
        snapshots: Path, damage: str, pool: PoolConfig | None,
        caplog: pytest.LogCaptureFixture) -> None:
    node = Interpreters().node_path()
    built = node_snapshot.build(node, node_flags(Limits()))
    assert built.returncode == 0, built.stderr
    blob = node_snapshot.blob_path(node, node_flags(Limits()))
    assert blob is not None
    damaged = DAMAGED[damage](blob)
    blob.write_bytes(damaged)

    async def go() -> list[Any]:
        async with Runtime(sandbox="process", pool=pool) as rt:
            return [await rt.run("return 1 + 1", language="javascript") for _ in range(3)]

    with caplog.at_level(logging.WARNING, logger="tether"):
        results = asyncio.run(go())
    assert [(r.status, r.value) for r in results] == [(Status.OK, 2)] * 3, results[0].error
    assert "could not start from its snapshot" in caplog.text
    assert not blob.exists() or blob.read_bytes() != damaged  # removed, perhaps built again


def test_a_blob_is_removed_only_when_a_guest_from_main_starts_where_one_from_it_did_not(
        snapshots: Path) -> None:
    node = Interpreters().node_path()
    assert node_snapshot.build(node, node_flags(Limits())).returncode == 0
    blob = node_snapshot.blob_path(node, node_flags(Limits()))
    assert blob is not None
    node_snapshot.suspect(blob)  # a guest from it ended before HELLO
    assert "--snapshot-blob" not in _argv()
    node_snapshot.acquit(blob)  # and so did the one from main.mjs
    assert blob.is_file() and "--snapshot-blob" in _argv()
    node_snapshot.suspect(blob)
    node_snapshot.condemn(blob)  # the one from main.mjs said HELLO
    assert not blob.exists()


def _started_from(where: Path) -> list[int]:
    """Processes whose command line names a file under ``where``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(where).encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_closing_the_runtime_stops_a_cold_guest_still_starting(snapshots: Path) -> None:
    """A cold guest from the snapshot is started until its HELLO before its
    run begins: closing the Runtime then cancels the run and ends the guest."""
    node = Interpreters().node_path()
    assert node_snapshot.build(node, node_flags(Limits())).returncode == 0

    async def go() -> Any:
        rt = Runtime(sandbox="process", pool=None)
        run = asyncio.get_running_loop().create_task(rt.run("return 1", language="javascript"))
        while not _started_from(snapshots):  # the guest is starting
            await asyncio.sleep(0.001)
        await rt.aclose()
        left = _started_from(snapshots)  # once closed, nothing of it may run on
        return left, await run

    left, result = asyncio.run(go())
    assert left == []
    assert result.status is Status.CANCELLED, result


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_cold_guest_from_the_snapshot_times_out_with_its_run(snapshots: Path) -> None:
    """Its HELLO is awaited before the run begins, within the run's timeout."""
    node = Interpreters().node_path()
    assert node_snapshot.build(node, node_flags(Limits())).returncode == 0

    async def go() -> Any:
        async with Runtime(sandbox="process", pool=None) as rt:
            return await rt.run("return 1", language="javascript", limits=Limits(timeout=0.001))

    result = asyncio.run(go())
    assert result.status is Status.TIMEOUT, result.error


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_guest_with_no_snapshot_starts_from_main_and_the_build_goes_on_apart(
        snapshots: Path) -> None:
    assert "--snapshot-blob" not in _argv()  # the first asks for it
    assert asyncio.run(_runs("process"))[:3] == [Status.OK, "hi function /\n", [3, []]]
    deadline = time.monotonic() + 60
    while "--snapshot-blob" not in _argv() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "--snapshot-blob" in _argv()
    # Another heap limit is another V8 flag, so another blob.
    assert "--snapshot-blob" not in _argv(Limits(memory_bytes=512 * 1024 * 1024))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_where_no_snapshot_can_be_built_guests_start_from_main(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setattr(node_snapshot, "SNAPSHOT_DIR", tmp_path / "file" / "snapshots")
    monkeypatch.setattr(node_snapshot, "_asked", set())
    node = Interpreters().node_path()
    assert node_snapshot.build(node, node_flags(Limits())).returncode != 0
    for _ in range(3):
        assert "--snapshot-blob" not in _argv()
    assert asyncio.run(_runs("process"))[0] is Status.OK


def test_a_build_that_fails_leaves_no_blob(snapshots: Path) -> None:
    node = Interpreters().node_path()
    failed = node_snapshot.build(node, ("--max-old-space-size=none",))
    assert failed.returncode != 0 and "no startup snapshot" in failed.stderr
    assert list(snapshots.iterdir()) == []


def test_a_build_removes_the_blobs_no_host_has_used_for_a_month(snapshots: Path) -> None:
    snapshots.mkdir()
    unused, recent = snapshots / "unused-0.blob", snapshots / "recent-0.blob"
    unused.write_bytes(b"old")
    recent.write_bytes(b"old")
    month_ago = time.time() - 31 * 24 * 3600
    os.utime(unused, (month_ago, month_ago))
    node = Interpreters().node_path()
    assert node_snapshot.build(node, node_flags(Limits())).returncode == 0
    blob = node_snapshot.blob_path(node, node_flags(Limits()))
    assert blob is not None
    assert sorted(p.name for p in snapshots.iterdir()) == sorted([blob.name, recent.name])
    # A host that uses a blob touches it, so that no build removes it.
    os.utime(blob, (month_ago, month_ago))
    assert node_snapshot.snapshot_blob(node, node_flags(Limits())) == blob
    assert blob.stat().st_mtime > month_ago + 24 * 3600
