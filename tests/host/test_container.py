"""CommandLauncher through a real container engine (Podman): each guest a
container started with ``podman run -i --rm``, the frames on its stdio.

The image is made here, offline: a root filesystem of a few directories
with this machine's ``/usr``, its Python and tether bound read-only into
it (``--rootfs``: no registry, no image store). The engine keeps its state
in this test's own directory, so "no container left" counts this test's
containers only. Where Podman is missing or cannot start a container on
this machine, every test here is skipped with the engine's own error.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import tether
from tether import CommandLauncher, Limits, PoolConfig, Runtime, Status
from tether.conformance.cli import load_all
from tether.conformance.record import TRANSCRIPTS
from tether.conformance.runner import check_guest, command_guest

from .conftest import quick


def _engine(state: Path, run: Path) -> list[str]:
    """podman with its state under ``state`` and ``run`` (a short path:
    podman refuses one over 50 characters); runc where present (crun cannot
    run on a host whose cgroups are a v1/v2 hybrid)."""
    podman = shutil.which("podman")
    assert podman is not None
    argv = [podman, "--root", str(state / "root"), "--runroot", str(run),
            "--storage-driver", "vfs", "--cgroup-manager", "cgroupfs", "--events-backend",
            "none"]
    if shutil.which("runc"):
        argv += ["--runtime", "runc"]
    return argv


def _rootfs(where: Path) -> tuple[Path, list[str]]:
    """An empty root with the usual links into /usr, and the binds that fill
    it: /usr, the interpreter's prefixes, and tether and cbor2's directories."""
    root = where / "rootfs"
    for name in ("dev", "proc", "sys", "tmp", "etc", "usr"):
        (root / name).mkdir(parents=True, exist_ok=True)
    for name in ("bin", "sbin", "lib", "lib64"):
        if Path("/", name).is_symlink():
            (root / name).symlink_to(os.readlink(Path("/", name)))
        else:
            (root / name).mkdir(exist_ok=True)
    import cbor2

    places = {"/usr", sys.base_prefix, sys.prefix,
              str(Path(tether.__file__).resolve().parent.parent),
              str(Path(cbor2.__file__).resolve().parent.parent),
              str(Path(sys.executable).resolve().parent)}
    binds = []
    for place in sorted(places):
        if any(place != other and place.startswith(other + "/") for other in places):
            continue  # inside another bind
        binds += ["-v", f"{place}:{place}:ro"]
    return root, binds


@pytest.fixture(scope="module")
def container(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[str], list[str]]]:
    """(the engine's argv, ``run``'s argv up to the image's command)."""
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (.ci/run installs it: apt-get install podman runc)")
    where = tmp_path_factory.mktemp("podman")
    runroot = Path(tempfile.mkdtemp(prefix="tether-podman-", dir="/tmp"))
    engine = _engine(where, runroot)
    root, binds = _rootfs(where)
    run = [*engine, "run", "-i", "--rm", "--network", "none", "--name", "{name}",
           # The engine's default rlimits exceed what a container may hold here.
           "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096",
           # runc mounts the cgroup tree itself, which fails on a hybrid host.
           "-v", "/sys/fs/cgroup:/sys/fs/cgroup:ro", *binds, "--rootfs", str(root)]
    try:
        probe = subprocess.run([*run[:run.index("{name}") - 1], *run[run.index("{name}") + 1:],
                                "/bin/true"], capture_output=True, text=True, timeout=120,
                               stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        shutil.rmtree(runroot, ignore_errors=True)
        pytest.skip("podman did not start a container within 120 s")
    if probe.returncode != 0:
        shutil.rmtree(runroot, ignore_errors=True)
        pytest.skip(f"podman cannot start a container here: {probe.stderr.strip()[-500:]}")
    yield engine, run
    subprocess.run([*engine, "rm", "-af"], capture_output=True, timeout=120, check=False)
    subprocess.run([*engine, "system", "reset", "-f"], capture_output=True, timeout=120,
                   check=False)
    shutil.rmtree(runroot, ignore_errors=True)


def _containers(engine: list[str]) -> list[str]:
    listed = subprocess.run([*engine, "ps", "-a", "--format", "{{.Names}}"],
                            capture_output=True, text=True, timeout=60, check=True)
    return listed.stdout.split()


def _launcher(container: tuple[list[str], list[str]]) -> CommandLauncher:
    engine, run = container
    return CommandLauncher([*run, sys.executable, "-m", "tether.guest", "--stdio",
                            "--language", "{language}"],
                           kill=[*engine, "rm", "-f", "-t", "0", "{name}"], name="podman")


def test_runs_in_containers(container: tuple[list[str], list[str]]) -> None:
    """Hello, binding calls, a crash and a timeout, each in a container of
    its own; a warm one waits in the pool; none is left after."""
    async def add(a: int, b: int) -> int:
        return a + b

    async def go() -> list[tether.RunResult]:
        async with Runtime(launcher=_launcher(container),
                           pool=PoolConfig(size=1, prestart=("python",))) as rt:
            return [
                await rt.run("import os\nos.write(1, b'stray')\nprint('hi')\n"
                             "return await add(1, await add(2, 3))",
                             bindings={"add": add}, limits=quick()),
                await rt.run("import os\nos._exit(3)", limits=quick()),
                await rt.run("import time\ntime.sleep(60)", limits=quick(timeout=1.0)),
                await rt.run("import resource\n"
                             "return list(resource.getrlimit(resource.RLIMIT_NOFILE))",
                             limits=quick(open_files=99)),
            ]

    hello, crash, timeout, limited = asyncio.run(go())
    assert hello.status is Status.OK, (hello.error, hello.raw_stderr)
    # R-STDIO-1, R-OUTPUT-5: a write to fd 1 itself is output, never a frame
    assert (hello.value, hello.output, hello.stats.sandbox) == (6, "strayhi\n", "podman")
    assert crash.status is Status.CRASHED and crash.stats.exit_code == 3
    assert timeout.status is Status.TIMEOUT
    assert limited.value == [99, 99]  # R-STDIO-5: the guest limits itself
    assert _containers(container[0]) == []


def test_javascript_in_a_container(container: tuple[list[str], list[str]]) -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")

    async def go() -> tether.RunResult:
        async with Runtime(launcher=_launcher(container), pool=None) as rt:
            return await rt.run("console.log('js')\nreturn 6 * 7", language="javascript",
                                limits=quick())

    result = asyncio.run(go())
    assert result.status is Status.OK, (result.error, result.raw_stderr)
    assert (result.value, result.output) == (42, "js\n")
    assert _containers(container[0]) == []


def test_closing_the_runtime_kills_a_container(container: tuple[list[str], list[str]]) -> None:
    """R-STDIO-6: the engine's own kill (``podman rm -f``) ends a container
    whose client outlives its stream; it is gone when the run returns."""
    async def go() -> tether.RunResult:
        async with Runtime(launcher=_launcher(container), pool=None) as rt:
            task = asyncio.ensure_future(rt.run("import time\ntime.sleep(60)",
                                                limits=Limits(timeout=60, kill_grace=0.2)))
            while not _containers(container[0]):
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)  # the program runs
        return await task

    assert asyncio.run(go()).status is Status.CANCELLED
    assert _containers(container[0]) == []


def test_conformance_through_the_container(container: tuple[list[str], list[str]]) -> None:
    """Every guest scenario, strict, over the stdio of ``podman run -i``."""
    _, run = container
    argv = [a.replace("{name}", f"tether-conformance-{os.getpid()}") for a in run]
    argv += [sys.executable, "-m", "tether.guest", "--stdio"]
    failures = []
    for transcript in load_all(TRANSCRIPTS):
        result = asyncio.run(check_guest(transcript, "python", command_guest(argv),
                                         strict=True, transport="stdio"))
        if result.verdict == "fail":
            failures.append(f"{transcript.scenario}: {result.detail}")
    assert failures == []
    assert _containers(container[0]) == []
