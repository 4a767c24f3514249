"""Guests started by a command whose stdin and stdout carry the frames
(spec §3.1, R-STDIO-1..7): ``Runtime(launcher=CommandLauncher(argv))``,
with real subprocesses — the standalone guest (``python -m tether.guest
--stdio``) itself, or behind a shell that stands for a container engine's
client. Each test checks that nothing it started is left running."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tether import (
    CommandLauncher,
    Launcher,
    Limits,
    PoolConfig,
    RunResult,
    Runtime,
    Status,
    SyncRuntime,
)
from tether.host.guests.launch import GuestProcess, Remote
from tether.host.guests.remote import Stream, over_stream

from .conftest import quick, until_ready

GUEST = [sys.executable, "-m", "tether.guest", "--stdio", "--language", "{language}"]


class Recording(CommandLauncher):
    """A CommandLauncher that remembers every guest it started."""

    def __init__(self, argv: Sequence[str], **options: Any) -> None:
        super().__init__(argv, **options)
        self.started: list[tuple[int, bool]] = []  # (pid, warm)

    async def start(self, language: str, limits: Limits, *, warm: bool) -> GuestProcess:
        guest = await super().start(language, limits, warm=warm)
        self.started.append((guest.child.pid, warm))
        return guest


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"


def _runs(launcher: Recording, *sources: str, pool: PoolConfig | None = None,
          **options: Any) -> list[RunResult]:
    async def go() -> list[RunResult]:
        async with Runtime(launcher=launcher, pool=pool) as rt:
            return [await rt.run(source, **{"limits": quick(), **options}) for source in sources]

    results = asyncio.run(go())
    assert launcher.started, "the launcher started no guest"
    for pid, _ in launcher.started:
        assert _gone(pid), f"the guest's command {pid} is still running"
    return results


def test_hello_and_binding_calls_over_a_commands_stdio() -> None:
    async def add(a: int, b: int) -> int:
        return a + b

    [result] = _runs(Recording(GUEST), "print('hi')\nreturn await add(1, await add(2, 3))",
                     bindings={"add": add})
    assert result.status is Status.OK, result.error
    assert result.value == 6
    assert result.output == "hi\n"
    assert result.stats.sandbox == "command"
    assert result.stats.calls == 2


def test_stray_writes_to_fd_1_do_not_reach_the_frames() -> None:
    """R-STDIO-1: what the program, a library or a child process writes to
    fd 1 never reaches the frames: the Python guest sends it as the
    program's output (R-OUTPUT-5), in the order written."""
    source = ("import os, subprocess\nos.write(1, b'TH\\x01\\x01 forged\\n')\n"
              "subprocess.run(['echo', 'from a child'])\nprint('kept')\nreturn 1")
    [result] = _runs(Recording(GUEST), source)
    assert result.status is Status.OK, result.error
    assert result.value == 1
    assert result.output == "TH\x01\x01 forged\nfrom a child\nkept\n"
    assert "forged" not in result.raw_stderr


def test_a_preamble_before_hello_is_skipped_and_kept_as_raw_output() -> None:
    """R-STDIO-2: a banner from whatever starts the guest is skipped and
    kept as raw output, never program output."""
    argv = ["sh", "-c", 'echo "welcome to the engine"; exec "$@"', "sh", *GUEST]
    [result] = _runs(Recording(argv), "return 5")
    assert result.status is Status.OK, result.error
    assert result.value == 5
    assert result.raw_stdout == "welcome to the engine\n"
    assert result.output == ""


def test_a_preamble_past_64_kib_is_a_protocol_error() -> None:
    argv = ["sh", "-c", 'head -c 70000 /dev/zero | tr "\\0" x; exec "$@"', "sh", *GUEST]
    [result] = _runs(Recording(argv), "return 5")
    assert result.status is Status.PROTOCOL_ERROR
    assert result.error is not None and "FRAME_MALFORMED" in result.error.message


def test_a_timeout_ends_the_stream_and_the_command() -> None:
    """R-STDIO-6: the stream is closed, the command given its grace, then
    its group killed; the run returns, nothing is left."""
    [result] = _runs(Recording(GUEST), "while True:\n    pass",
                     limits=quick(timeout=0.5, kill_grace=0.2))
    assert result.status is Status.TIMEOUT


def _after_the_pool_is_ready(source: str, **options: Any) -> RunResult:
    """Run ``source`` in a guest that has said HELLO already: its program
    starts at once, however long a guest takes to start on a busy machine."""
    async def go() -> RunResult:
        async with Runtime(launcher=Recording(GUEST),
                           pool=PoolConfig(size=1, prestart=("python",))) as rt:
            await until_ready(rt, 1)
            return await rt.run(source, **options)

    return asyncio.run(go())


#: spin() called from line 6: a busy loop, or a sleep in C.
@pytest.mark.parametrize("source", ["def spin():\n    while True:\n        pass\n\n\nspin()",
                                    "import time\n\ndef spin():\n    time.sleep(60)\n\nspin()"])
def test_a_program_that_computes_stops_when_its_stream_ends(source: str) -> None:
    """R-STDIO-7: the host's SIGTERM does not reach a guest over stdio
    (only its command would get it), yet a program that never reads its
    channel stops when the stream ends, and the run says where it was
    (R-CANCEL-4)."""
    result = _after_the_pool_is_ready(source, limits=quick(timeout=0.5, kill_grace=10.0))
    assert result.status is Status.TIMEOUT
    assert result.error is not None and result.error.line is not None, result.error
    assert "in spin" in result.error.traceback and "line 6, in <module>" in result.error.traceback
    assert result.stats.exit_code == 0  # it ended itself, not the kill after the grace


def test_a_stream_that_ends_while_the_program_compiles_stops_it_before_it_runs() -> None:
    """R-STDIO-7: the end can come while the guest's own code runs (here it
    compiles a long program); the program is stopped before its first line."""
    source = "x = [" + ",".join(["1"] * 200_000) + "]\nwhile True:\n    pass\n"
    result = _after_the_pool_is_ready(source, limits=quick(timeout=0.05, kill_grace=30.0,
                                                           cpu_seconds=60))
    assert result.status is Status.TIMEOUT
    assert result.error is not None and result.error.traceback == "ProgramCancelled\n", result
    assert result.stats.exit_code == 0


def test_a_program_stopped_in_a_binding_call_says_where_it_waited() -> None:
    """R-STDIO-7, R-CANCEL-4: the guest reads the end of the stream itself
    while the program waits on a binding; the program's ``finally`` runs
    and prints, and the DONE says the program waited on line 2."""
    async def slow() -> None:
        await asyncio.sleep(60)

    source = "try:\n    await slow()\nfinally:\n    print('cleaning up')\n"
    for program in (source, "import asyncio\n" + source):
        result = _after_the_pool_is_ready(program, bindings={"slow": slow},
                                          limits=quick(timeout=0.5, kill_grace=10.0))
        assert result.status is Status.TIMEOUT
        assert result.error is not None, result
        assert result.error.line == program.count("\n", 0, program.index("await slow")) + 1, \
            result.error


def test_watching_for_the_end_costs_the_program_no_memory() -> None:
    """R-STDIO-5, R-STDIO-7: the guest's watch for the end of its stream
    leaves ``memory_bytes`` to the program."""
    [result] = _runs(Recording(GUEST), "x = bytearray(40 << 20)\nreturn len(x)",
                     limits=quick(memory_bytes=100 << 20))
    assert result.status is Status.OK, result.error


def test_a_crashing_guest_is_a_crashed_run() -> None:
    """R-TERM-1 over a command's stdio: the command's exit status is the guest's."""
    [result] = _runs(Recording(GUEST), "import os\nos._exit(7)")
    assert result.status is Status.CRASHED
    assert result.stats.exit_code == 7


def test_a_command_that_cannot_start_is_a_crashed_run() -> None:
    results = _runs(Recording(["sh", "-c", "echo no such image >&2; exit 125"]), "return 1")
    assert results[0].status is Status.CRASHED
    assert "no such image" in results[0].raw_stderr

    async def go() -> RunResult:
        async with Runtime(launcher=CommandLauncher(["tether-no-such-command"])) as rt:
            return await rt.run("return 1")

    missing = asyncio.run(go())
    assert missing.status is Status.CRASHED
    assert missing.error is not None and "tether-no-such-command" in missing.error.message


def test_the_launchers_kill_runs_when_the_command_outlives_its_stream(tmp_path: Path) -> None:
    """R-STDIO-6: a command that ignores the end of its stream and SIGTERM
    (a container engine's client whose container runs on): the launcher's
    kill command ends it, then its process group is killed; the run still
    returns."""
    wrapper = ('trap "" TERM; echo $$ > "$0/{name}.pid"; "$@"; '
               'while :; do sleep 0.05; done')
    argv = ["sh", "-c", wrapper, str(tmp_path), *GUEST]
    kill = ["sh", "-c", f'touch "{tmp_path}/{{name}}.killed"; kill -9 "$(cat "{tmp_path}/{{name}}.pid")"']
    launcher = Recording(argv, kill=kill, name="engine")
    [result] = _runs(launcher, "import time\ntime.sleep(30)", limits=quick(timeout=0.5))
    assert result.status is Status.TIMEOUT
    assert result.stats.sandbox == "engine"
    assert len(list(tmp_path.glob("tether-*.killed"))) == 1


@pytest.mark.parametrize("exits", [0, 2])
def test_the_kill_runs_again_once_the_command_is_gone(tmp_path: Path, exits: int) -> None:
    """R-STDIO-6: a command that outlives its stream may be creating its
    guest, or removing it (an engine's client and its ``--rm``), where the
    engine's kill cannot see it, and killing the command then leaves the
    guest behind: the kill, whether it succeeded or failed, runs once more
    after the command's group is gone."""
    wrapper = 'trap "" TERM; echo $$ > "$0/carrier"; "$@"; while :; do sleep 0.05; done'
    argv = ["sh", "-c", wrapper, str(tmp_path), *GUEST]
    kill = ["sh", "-c", f'cd "{tmp_path}"; if kill -0 "$(cat carrier)" 2>/dev/null; '
                        f'then echo running; else echo gone; fi >> kills; exit {exits}']
    [result] = _runs(Recording(argv, kill=kill), "return 1")
    assert result.status is Status.OK
    kills = (tmp_path / "kills").read_text().split()
    assert kills == ["running", "gone"]


def test_a_kill_that_hangs_is_not_run_again(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """R-STDIO-6: an engine's kill that runs out of time says the engine is
    stuck, not that the guest was going: it is not run a second time."""
    from tether.host.guests import launch

    monkeypatch.setattr(launch, "REMOTE_STOP_TIMEOUT", 0.3)
    argv = ["sh", "-c", 'trap "" TERM; "$@"; while :; do sleep 0.05; done', "sh", *GUEST]
    kill = ["sh", "-c", f'echo started >> "{tmp_path}/kills"; exec sleep 60']
    [result] = _runs(Recording(argv, kill=kill), "return 1")
    assert result.status is Status.OK
    assert (tmp_path / "kills").read_text().split() == ["started"]


def test_a_warm_pool_holds_started_remote_guests() -> None:
    """The pool keeps launcher guests that have said HELLO; runs take them,
    and every guest serves exactly one run."""
    launcher = Recording(GUEST)

    async def go() -> list[Any]:
        async with Runtime(launcher=launcher,
                           pool=PoolConfig(size=1, prestart=("python",))) as rt:
            values = []
            for n in range(3):
                [pool] = rt._pools.values()
                while not pool._ready:  # the guest started ahead has said HELLO
                    await asyncio.sleep(0.01)
                values.append((await rt.run(f"return {n}", limits=quick())).value)
            return values

    assert asyncio.run(go()) == [0, 1, 2]
    assert [warm for _, warm in launcher.started] == [True] * 4  # 3 runs, 1 left ready
    assert len({pid for pid, _ in launcher.started}) == 4
    assert all(_gone(pid) for pid, _ in launcher.started)


def test_the_guest_sets_runs_rlimits_on_itself() -> None:
    """R-STDIO-5: the host cannot prlimit a guest it did not start; the
    guest lowers its own limits to RUN's."""
    [result] = _runs(Recording(GUEST),
                     "import resource\nreturn list(resource.getrlimit(resource.RLIMIT_NOFILE))",
                     limits=quick(open_files=77))
    assert result.status is Status.OK, result.error
    assert result.value == [77, 77]


def test_closing_the_runtime_ends_a_run_on_a_remote_guest() -> None:
    launcher = Recording(GUEST)

    async def go() -> RunResult:
        async with Runtime(launcher=launcher, pool=None) as rt:
            task = asyncio.ensure_future(rt.run("import time\ntime.sleep(30)", limits=quick()))
            while not launcher.started:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.2)
        return await task

    assert asyncio.run(go()).status is Status.CANCELLED
    assert all(_gone(pid) for pid, _ in launcher.started)


class OverAStream(Launcher):
    """Each guest a local subprocess behind :func:`over_stream`, whose
    stream takes a while to close (as a WebSocket's closing handshake does)."""

    def __init__(self, *, close_hangs: bool = False) -> None:
        self.closes_finished = 0
        self.processes: list[asyncio.subprocess.Process] = []
        self.close_hangs = close_hangs

    async def start(self, language: str, limits: Limits, *, warm: bool) -> GuestProcess:
        process = await asyncio.create_subprocess_exec(
            *[a.format(language=language) for a in GUEST], stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            env={**os.environ, "TETHER_TRANSPORT": "stdio"})
        assert process.stdin is not None and process.stdout is not None
        stdin, stdout = process.stdin, process.stdout
        self.processes.append(process)

        async def send(data: bytes) -> None:
            stdin.write(data)
            await stdin.drain()

        async def close_send() -> None:
            stdin.close()

        async def close() -> None:
            await asyncio.sleep(3600 if self.close_hangs else 0.3)
            if process.returncode is None:
                process.kill()
            await process.wait()
            self.closes_finished += 1

        child = over_stream(Stream(receive=lambda: stdout.read(65536), send=send,
                                   close_send=close_send, close=close,
                                   exit_code=lambda: process.returncode,
                                   stderr=lambda: b""), raw_output_bytes=limits.raw_output_bytes)
        return GuestProcess(child, 0, remote=Remote("stream"))


def test_a_closed_runtime_has_waited_for_its_streams_to_close() -> None:
    launcher = OverAStream()

    async def go() -> RunResult:
        async with Runtime(launcher=launcher, pool=None) as rt:
            result = await rt.run("print('over a stream')", limits=quick())
        assert launcher.processes and launcher.closes_finished == len(launcher.processes)
        return result

    result = asyncio.run(go())
    assert (result.status, result.output) == (Status.OK, "over a stream\n")


def test_javascript_over_a_commands_stdio() -> None:
    pytest.importorskip("tether.host.guests.languages")
    from tether.host.guests.languages import GuestUnavailable, Interpreters

    try:
        Interpreters().node_path()
    except GuestUnavailable as exc:
        pytest.skip(str(exc))
    [result] = _runs(Recording(GUEST), "console.log('js'); return 6 * 7", language="javascript")
    assert result.status is Status.OK, result.raw_stderr
    assert (result.value, result.output) == (42, "js\n")


def test_a_launcher_is_the_sandbox() -> None:
    with pytest.raises(ValueError, match="sandbox"):
        Runtime(launcher=CommandLauncher(GUEST), sandbox="namespaces")
    with pytest.raises(TypeError):
        Runtime(launcher=GUEST)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        CommandLauncher("python -m tether.guest --stdio")
    assert issubclass(CommandLauncher, Launcher)


def test_a_sync_runtime_takes_a_launcher() -> None:
    launcher = Recording(GUEST)
    with SyncRuntime(launcher=launcher, pool=None) as rt:
        assert rt.run("return 2 + 2", limits=quick()).value == 4
    assert all(_gone(pid) for pid, _ in launcher.started)


def test_one_program_runs_identically_locally_and_over_a_commands_stdio() -> None:
    source = ("rows = [await double(n) for n in range(5)]\nprint('rows', rows)\n"
              "import sys\nprint('warn', file=sys.stderr)\n"
              "return {'sum': sum(rows), 'bytes': b'\\x00\\xff', 'nested': [[], {}]}")

    async def double(n: int) -> int:
        return 2 * n

    async def go(launcher: Launcher | None) -> RunResult:
        async with Runtime(launcher=launcher, pool=None) as rt:
            return await rt.run(source, bindings={"double": double}, limits=quick())

    local = asyncio.run(go(None))
    remote = asyncio.run(go(Recording(GUEST)))
    assert local.status is remote.status is Status.OK
    assert (local.value, local.output, local.chunks) == (remote.value, remote.output,
                                                         remote.chunks)
    assert local.stats.calls == remote.stats.calls == 5


def test_a_kill_command_that_hangs_cannot_hold_the_run(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """R-STDIO-6: the run returns even when the engine's kill never ends;
    the kill command is ended too."""
    from tether.host.guests import launch

    monkeypatch.setattr(launch, "REMOTE_STOP_TIMEOUT", 0.5)
    marker = f"tether-hanging-kill-{os.getpid()}"
    argv = ["sh", "-c", 'trap "" TERM; "$@"; while :; do sleep 0.05; done', "sh", *GUEST]
    kill = [sys.executable, "-c", "import time; time.sleep(60)", marker]
    [result] = _runs(Recording(argv, kill=kill), "import time\ntime.sleep(30)",
                     limits=quick(timeout=0.5))
    assert result.status is Status.TIMEOUT
    assert not [p for p in Path("/proc").iterdir() if p.name.isdigit()
                and marker.encode() in _cmdline(p)]


def _cmdline(process: Path) -> bytes:
    try:
        return (process / "cmdline").read_bytes()
    except OSError:
        return b""


#: A command that says HELLO after a banner, then sends bytes that are no
#: frame, and waits for its stdin to end.
RESYNC = """
import os, sys
from tether.codec import Connection, Hello, Role
hello = Connection(Role.GUEST).send(Hello(implementation="forger", languages=("python",)))
os.write(1, b"banner\\n" + hello + b"not a frame, and no banner either")
sys.stdin.buffer.read()
"""


def test_after_the_first_frame_no_byte_is_skipped() -> None:
    """R-STDIO-3: past the first frame there is no resynchronisation."""
    [result] = _runs(Recording([sys.executable, "-c", RESYNC]), "return 1")
    assert result.status is Status.PROTOCOL_ERROR, result.error
    assert result.raw_stdout == "banner\n"


class StartsSlowly(Recording):
    """A Recording whose start first waits ``delay`` seconds (a pod being
    scheduled, an image pulled); ``ignore_cancel``: it starts its guest all
    the same when it is cancelled meanwhile. Remembers its cancelled starts."""

    def __init__(self, delay: float, *, ignore_cancel: bool = False) -> None:
        super().__init__(GUEST)
        self.delay = delay
        self.ignore_cancel = ignore_cancel
        self.cancelled: list[bool] = []  # warm, of each start cancelled while it waited

    async def start(self, language: str, limits: Limits, *, warm: bool) -> GuestProcess:
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled.append(warm)
            if not self.ignore_cancel:
                raise
        return await super().start(language, limits, warm=warm)


def test_a_launcher_whose_start_hangs_ends_the_run_with_a_timeout() -> None:
    """R-STDIO-6, R-TERM-1: the launcher's start counts in the run's
    timeout; a start that never ends is cancelled and the run times out."""
    launcher = StartsSlowly(3600)

    async def go() -> RunResult:
        async with Runtime(launcher=launcher, pool=None) as rt:
            return await asyncio.wait_for(rt.run("return 1", limits=quick(timeout=0.5)), 30)

    result = asyncio.run(go())
    assert result.status is Status.TIMEOUT, result.error
    assert launcher.cancelled == [False]
    assert result.stats.sandbox == "command"
    assert result.error is not None and result.error.type == "Timeout"
    assert result.error.message == ("the guest did not start within 0.5 s (the launcher "
                                    "command did not start it); the program did not run")
    assert result.raw_stderr == ""


def test_a_slow_start_counts_in_the_runs_timeout() -> None:
    """A launcher that takes 1.5 s to start leaves a 2 s run 0.5 s: a
    program that sleeps 1 s times out."""
    [result] = _runs(StartsSlowly(1.5), "import time\ntime.sleep(1)\nreturn 1",
                     limits=quick(timeout=2.0))
    assert result.status is Status.TIMEOUT, (result.status, result.error)


def test_a_guest_started_after_the_runs_time_is_up_is_ended() -> None:
    """A launcher that ignores its start's cancellation and returns a
    guest all the same: the run has timed out, and that guest is ended
    (``_runs`` checks that no guest's command still runs)."""
    launcher = StartsSlowly(1.0, ignore_cancel=True)
    [result] = _runs(launcher, "return 1", limits=quick(timeout=0.3))
    assert result.status is Status.TIMEOUT
    assert launcher.cancelled == [False] and len(launcher.started) == 1


def test_a_warm_start_that_hangs_is_given_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """A guest started ahead for the pool has START_TIMEOUT to be ready;
    a launcher's start that hangs is cancelled then, the Runtime still open."""
    from tether.host.guests import pool

    monkeypatch.setattr(pool, "START_TIMEOUT", 0.3)
    launcher = StartsSlowly(3600)

    async def go() -> list[bool]:
        async with Runtime(launcher=launcher,
                           pool=PoolConfig(size=1, prestart=("python",))):
            for _ in range(1000):
                if launcher.cancelled:
                    break
                await asyncio.sleep(0.01)
            return list(launcher.cancelled)  # before the close cancels what still starts

    assert asyncio.run(go())[:1] == [True]


class ClosesBadly(CommandLauncher):
    """A CommandLauncher whose aclose raises, or hangs."""

    def __init__(self, how: str) -> None:
        super().__init__(GUEST)
        self.how = how

    async def aclose(self) -> None:
        if self.how == "hangs":
            await asyncio.sleep(3600)
        raise RuntimeError("the API client would not close")


@pytest.mark.parametrize("how", ["raises", "hangs"])
def test_a_launcher_whose_aclose_fails_still_lets_the_runtime_close(
        how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The launcher's aclose is bounded and logged like its other hooks:
    the Runtime closes its checker and its binding threads all the same."""
    from tether.host.guests import launch

    monkeypatch.setattr(launch, "REMOTE_STOP_TIMEOUT", 0.3)
    closed: list[str] = []

    async def go() -> RunResult:
        rt = Runtime(launcher=ClosesBadly(how), pool=None)
        checker_aclose = rt._checker.aclose

        async def checker_closed() -> None:
            closed.append("checker")
            await checker_aclose()

        monkeypatch.setattr(rt._checker, "aclose", checker_closed)
        async with rt:
            result = await rt.run("return 1", limits=quick())
        closed.append("runtime")
        assert rt._binding_threads._shutdown
        return result

    result = asyncio.run(asyncio.wait_for(go(), 30))
    assert result.value == 1
    assert closed == ["checker", "runtime"]


def test_a_stream_whose_close_hangs_leaves_no_task_or_socket_behind(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A Stream.close that never ends is given REMOTE_STOP_TIMEOUT; the
    pump's task ends and its socket is closed before the Runtime is."""
    from tether.host.guests import launch

    monkeypatch.setattr(launch, "REMOTE_STOP_TIMEOUT", 0.3)
    launcher = OverAStream(close_hangs=True)

    async def go() -> tuple[RunResult, list[str], int]:
        before = len(os.listdir("/proc/self/fd"))
        async with Runtime(launcher=launcher, pool=None) as rt:
            result = await rt.run("return 1", limits=quick())
        left = [repr(t.get_coro()) for t in asyncio.all_tasks() - {asyncio.current_task()}]
        for process in launcher.processes:
            if process.returncode is None:
                process.kill()
            await process.wait()
        await asyncio.sleep(0.1)  # the subprocess transports close their pipes
        return result, left, len(os.listdir("/proc/self/fd")) - before

    result, left, more_fds = asyncio.run(go())
    assert result.value == 1
    assert left == []
    assert more_fds <= 0
