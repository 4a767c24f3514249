"""Host tests run real guests, or, in a module marked ``memory_guest``, the
in-memory guest (tests/memory_guest.py) for their Python runs: the tests
that check the engine, not the sandbox. After the whole session nothing
may be left: no process started by a run, no descriptor, no work
directory, no in-memory guest's thread."""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether import Limits, PoolConfig, RunResult, Runtime
from tether.host.aio.channel import SEND_BUFFER_BYTES
from tether.host.guests import node_snapshot

from ..memory_guest import MemoryLauncher

#: Programs that start processes of their own put this in their argv, so the
#: leak check can find every one of them. It names this test session, so
#: suites running side by side (other checkouts) do not see each other's.
MARKER = f"tether-test-marker-{os.getpid()}"
#: This checkout's guests: other checkouts' guests are not this suite's leaks.
_CHECKOUT = str(Path(__file__).resolve().parents[2])


class _Shared:
    """One event loop and one Runtime for the whole session, so most runs
    take a warm guest from its pool, as in an application; and one whose
    guests are in-memory ones, for the tests of the engine."""

    loop: asyncio.AbstractEventLoop | None = None
    runtime: Runtime | None = None
    memory: Runtime | None = None
    #: The running test's Python runs use ``memory`` (a memory_guest test).
    in_memory = False


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "memory_guest: the test's Python runs (through conftest's run) use the "
                   "in-memory guest; it checks the engine, not the sandbox")
    config.addinivalue_line(
        "markers", "real_guest: a test of a memory_guest module that needs a guest process")


@pytest.fixture(autouse=True)
def _guest_kind(request: pytest.FixtureRequest) -> Iterator[None]:
    _Shared.in_memory = request.node.get_closest_marker("memory_guest") is not None \
        and request.node.get_closest_marker("real_guest") is None
    yield
    _Shared.in_memory = False


def runtime_for(language: str = "python") -> Runtime:
    """The shared Runtime a run in ``language`` uses in the running test."""
    runtime = _Shared.memory if _Shared.in_memory and language == "python" else _Shared.runtime
    assert runtime is not None
    return runtime


def memory_runtime(**options: Any) -> Runtime:
    """A Runtime whose guests are in-memory ones (Python only)."""
    return Runtime(launcher=MemoryLauncher(), **options)


def run(source: str, **kwargs: Any) -> RunResult:
    if "env" in kwargs:  # a per-runtime setting: a Runtime of its own
        env = kwargs.pop("env")

        async def go() -> RunResult:
            async with Runtime(env=env) as rt:
                return await rt.run(source, **kwargs)

        return asyncio.run(go())
    assert _Shared.loop is not None
    runtime = runtime_for(kwargs.get("language", "python"))
    return _Shared.loop.run_until_complete(runtime.run(source, **kwargs))


@pytest.fixture(scope="session", autouse=True)
def shared_runtime(nothing_leaks: None) -> Iterator[None]:
    _Shared.loop = asyncio.new_event_loop()
    _Shared.runtime = Runtime(pool=PoolConfig(size=2, prestart=("python", "javascript")))
    _Shared.memory = memory_runtime(pool=PoolConfig(size=2, prestart=("python",)))
    _Shared.loop.run_until_complete(_Shared.runtime.__aenter__())
    _Shared.loop.run_until_complete(_Shared.memory.__aenter__())
    yield
    _Shared.loop.run_until_complete(_Shared.memory.aclose())
    _Shared.loop.run_until_complete(_Shared.runtime.aclose())
    _Shared.loop.close()
    left = [t for t in threading.enumerate() if t.name == "tether-memory-guest"]
    for thread in left:
        thread.join(5.0)
    assert not [t for t in left if t.is_alive()], "in-memory guests' threads left running"


LANGUAGES = ["python", "javascript"]
#: Programs, per language, that never end: busy, and blocked (in JavaScript an
#: interval keeps Node's loop alive; a promise alone that nothing settles ends
#: the run, R-DONE-9).
SPIN = {"python": "while True:\n    pass\n", "javascript": "while (true) {}\n"}
BLOCK = {"python": "import time\ntime.sleep(10)\n",
         "javascript": "setInterval(() => {}, 1000)\nawait new Promise(() => {})\n"}


def write_fd3(lang: str, data: bytes) -> str:
    """A program line writing ``data`` straight to fd 3, past the guest."""
    return pick(lang, python=f"import os\nos.write(3, {data!r})\n",
                javascript=f"require('fs').writeSync(3, Buffer.from('{data.hex()}', 'hex'))\n")


@pytest.fixture(params=LANGUAGES)
def lang(request: pytest.FixtureRequest) -> str:
    """Runs a test once per guest; the test picks its program with ``pick``."""
    return str(request.param)


def granted_send_buffer() -> int:
    """What a Unix socket's send buffer becomes when SEND_BUFFER_BYTES is
    asked for (the kernel caps it at net.core.wmem_max and doubles it)."""
    probe, other = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with probe, other:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)
        return int(probe.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF))


def pick(lang: str, *, python: str, javascript: str) -> str:
    return {"python": python, "javascript": javascript, "typescript": javascript}[lang]


def cancellation_probe() -> tuple[Any, asyncio.Event]:
    """A binding ``slow`` that never returns and records being cancelled."""
    cancelled = asyncio.Event()

    async def slow() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    return slow, cancelled


async def until_ready(rt: Runtime, count: int) -> None:
    """Until ``rt``'s pools hold ``count`` guests that have said HELLO."""
    for _ in range(500):
        if sum(len(p._ready) for p in rt._pools.values()) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the pool never filled")


def quick(**changes: Any) -> Limits:
    return Limits(**{"timeout": 10.0, "kill_grace": 0.2, **changes})


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


def _describe(pid: int) -> str:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:200]
    except OSError:
        return "gone"
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return f"{fields.get('State', '').strip()} ppid={fields.get('PPid', '').strip()} {cmdline!r}"


def _target(fd: str) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return "gone"


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def marked_process_alive() -> bool:
    """Whether a process started with MARKER in its argv lives (pids printed
    inside a PID namespace mean nothing outside, argv does)."""
    return any(alive(p) for p in _processes_with(MARKER))


def no_marked_processes(within: float = 5.0) -> bool:
    """True once no process started with MARKER in its argv is left."""
    deadline = time.monotonic() + within
    while marked_process_alive():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def gone(pid: int, within: float = 5.0) -> bool:
    """True once ``pid`` has died. SIGKILL reaches the whole group before
    run() returns, but dying and reaping may finish just after it."""
    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def _another_workers(pid: int) -> bool:
    """Whether ``pid`` was started by another pytest-xdist worker (a child
    of the same controller), which checks its own; a guest of ours, or one
    left without a parent, is ours to find."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return False
    controller = os.getppid()
    for _ in range(64):
        if pid <= 1 or pid == os.getpid():
            return False
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return False
        parent = int(status.split("\nPPid:", 1)[1].split()[0])
        if parent == controller:
            return True
        pid = parent
    return False


@pytest.fixture(scope="session", autouse=True)
def nothing_leaks() -> Iterator[None]:
    fds_before = set(os.listdir("/proc/self/fd"))
    dirs_before = set(Path(tempfile.gettempdir()).glob("tether-run-*"))
    yield
    guests = [pid for script in ("python/main.py", "node/main.mjs", "python/check.py",
                                 "node/check.mjs")
              for pid in _processes_with(f"{_CHECKOUT}/guest/{script}")
              if not _another_workers(pid)]
    leaked_pids = [p for p in _processes_with(MARKER) + guests if alive(p)]
    # Under pytest-xdist another worker's guests may be dying as this one
    # ends, orphaned (so not known as theirs): a leak is one that stays.
    deadline = time.monotonic() + 5.0
    while leaked_pids and time.monotonic() < deadline:
        time.sleep(0.05)
        leaked_pids = [p for p in leaked_pids if alive(p)]
    assert not leaked_pids, "processes left behind:\n" + "\n".join(
        f"{p}: {_describe(p)}" for p in leaked_pids)
    leaked_fds = set(os.listdir("/proc/self/fd")) - fds_before
    assert not leaked_fds, "descriptors leaked: " + ", ".join(
        f"{fd} -> {_target(fd)}" for fd in sorted(leaked_fds, key=int))
    assert set(Path(tempfile.gettempdir()).glob("tether-run-*")) <= dirs_before
    # No child, not even a zombie. A Node snapshot's build (host/guests/node_snapshot.py)
    # is a child of ours while it runs, reaped by the thread that waits for it.
    deadline = time.monotonic() + node_snapshot.BUILD_TIMEOUT
    while True:
        try:
            os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            break
        assert time.monotonic() < deadline, "child processes left: " + " ".join(
            Path(f"/proc/self/task/{task}/children").read_text()
            for task in os.listdir("/proc/self/task"))
        time.sleep(0.05)
