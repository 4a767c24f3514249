"""R-STDIO-4: the transport is chosen by TETHER_TRANSPORT. A guest asked for
one it does not speak says so on fd 2 and exits before sending anything; both
guests speak fd 3 and stdio (the conformance suite runs them over stdio,
tests/conformance). R-STDIO-1: over stdio, whatever the program writes to
fd 1 itself lands on fd 2, never in the frame stream."""

from __future__ import annotations

import asyncio
import shutil
import signal
import sys
import tempfile
from collections.abc import Awaitable, Callable, Sequence

import pytest

from tether.codec import (
    NEED_DATA,
    Binding,
    Call,
    CallError,
    Cancel,
    Connection,
    Done,
    ErrorCode,
    Hello,
    Output,
    Result,
    Role,
    Run,
    RunLimits,
)
from tether.host.guests.languages import guest_command
from tether.host.guests.process import spawn
from tether.host.limits import Limits


async def _start(language: str, transport: str) -> tuple[int, str, bytes]:
    workdir = tempfile.mkdtemp(prefix="tether-transport-")
    try:
        command = guest_command(language, workdir, Limits())
        child = spawn(command.argv, {**command.env, "TETHER_TRANSPORT": transport},
                      raw_output_bytes=65536)
        try:
            await asyncio.wait_for(asyncio.shield(child.exited), 10)
            received = b""
            loop = asyncio.get_running_loop()
            while chunk := await asyncio.wait_for(loop.sock_recv(child.channel, 65536), 10):
                received += chunk
            code = await child.terminate(0.2, kill_now=True)
            child.drain_pipes()
            return code, child.raw_stderr.text(), received
        finally:
            child.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.mark.parametrize(("language", "transport"), [
    ("python", "carrier-pigeon"), ("javascript", "carrier-pigeon")])
def test_a_guest_asked_for_a_transport_it_lacks_says_so_and_exits(language: str,
                                                                   transport: str) -> None:
    if language == "javascript" and shutil.which("node") is None:
        pytest.skip("Node.js is not installed")
    code, stderr, received = asyncio.run(_start(language, transport))
    assert code != 0
    assert transport in stderr
    assert received == b""  # not even HELLO on fd 3


#: Programs that write to fd 1 behind the guest's back: straight to the
#: descriptor, and through a child process that inherits it.
STRAY = {
    "python": "import os, subprocess\n"
              "os.write(1, b'stray-direct\\n')\n"
              "subprocess.run(['/bin/echo', 'stray-child'])\n"
              "print('captured')\n"
              "return 7",
    "javascript": "const fs = require('node:fs');\n"
                  "fs.writeSync(1, 'stray-direct\\n');\n"
                  "require('node:child_process').spawnSync('/bin/echo', ['stray-child'], "
                  "{ stdio: 'inherit' });\n"
                  "console.log('captured');\n"
                  "return 7",
}


#: What the host does at a CALL: the guest's process, the host's connection.
AtCall = Callable[[Call, asyncio.subprocess.Process, Connection], Awaitable[None]]


async def _end_stream(call: Call, process: asyncio.subprocess.Process, host: Connection) -> None:
    """The stream ends at the CALL, left unanswered."""
    assert process.stdin is not None
    process.stdin.close()


async def _run_over_stdio(language: str, source: str, argv: Sequence[str] | None = None,
                          bindings: tuple[Binding, ...] = (), *, at_call: AtCall | None = None,
                          **resources: int) -> tuple[list[object], str]:
    """Run ``source`` in our guest for ``language`` (or started by ``argv``)
    over stdio: the guest's messages, and what it wrote to fd 2. ``at_call``:
    what the host does at each CALL."""
    workdir = tempfile.mkdtemp(prefix="tether-transport-")
    try:
        command = guest_command(language, workdir, Limits())
        process = await asyncio.create_subprocess_exec(
            *(argv or command.argv), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={**command.env, "TETHER_TRANSPORT": "stdio"}, cwd=workdir)
        assert process.stdin is not None and process.stdout is not None
        assert process.stderr is not None
        host = Connection(Role.HOST)
        events: list[object] = []
        limits = RunLimits(output_bytes=65536, value_bytes=65536, frame_bytes=1 << 20,
                           max_depth=64, max_calls_in_flight=8, **resources)
        try:
            while not any(isinstance(e, Done) for e in events):
                event = host.next_event()
                if event is NEED_DATA:
                    data = await asyncio.wait_for(process.stdout.read(65536), 20)
                    assert data, "the guest closed stdout before DONE"
                    host.receive_data(data)
                    continue
                events.append(event)
                if isinstance(event, Hello):
                    process.stdin.write(host.send(Run(source, language, bindings, limits)))
                elif isinstance(event, Call) and at_call is not None:
                    await at_call(event, process, host)
            process.stdin.close()
            await asyncio.wait_for(process.wait(), 20)
        finally:
            if process.returncode is None:  # the test failed: nothing of it runs on
                process.kill()
                await process.wait()
        return events, (await process.stderr.read()).decode()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_over_stdio_writes_to_fd_1_land_on_fd_2(language: str) -> None:
    """R-STDIO-1: a write to fd 1 never reaches the channel. The Python guest
    captures fds 1 and 2 into the program's output (R-OUTPUT-5); the Node
    guest leaves them to the carrier's stderr."""
    if language == "javascript" and shutil.which("node") is None:
        pytest.skip("Node.js is not installed")
    events, stderr = asyncio.run(_run_over_stdio(language, STRAY[language]))
    assert isinstance(events[0], Hello)
    assert isinstance(events[-1], Done) and events[-1].value == 7
    output = "".join(getattr(e, "text", "") for e in events)
    assert "captured" in output
    written = output if language == "python" else stderr
    assert "stray-direct" in written and "stray-child" in written


#: ``python -m tether.guest`` where the host's code and construct cannot be
#: imported: an image with a plain ``pip install tether`` needs neither.
WITHOUT_HOST = ("import runpy, sys\n"
                "sys.modules.update(dict.fromkeys(('construct', 'pydantic', 'tether.host')))\n"
                "runpy.run_module('tether.guest', run_name='__main__', alter_sys=True)\n")


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_the_standalone_guest_runs_without_the_host(language: str) -> None:
    if language == "javascript" and shutil.which("node") is None:
        pytest.skip("Node.js is not installed")
    program = {"python": "print('hi')\nreturn 6 * 7",
               "javascript": "console.log('hi'); return 6 * 7"}
    argv = [sys.executable, "-c", WITHOUT_HOST, "--stdio", "--language", language]
    events, stderr = asyncio.run(_run_over_stdio(language, program[language], argv))
    assert isinstance(events[-1], Done) and events[-1].value == 42, stderr
    assert "hi" in "".join(getattr(e, "text", "") for e in events)


def test_over_stdio_the_python_guest_sets_runs_rlimits_itself() -> None:
    """R-STDIO-5: a host across a stream cannot prlimit the guest; the
    CPython guest lowers its own rlimits from RUN's limits (R-RUN-4)."""
    source = ("import resource\n"
              "return [resource.getrlimit(getattr(resource, n))[0] for n in "
              "('RLIMIT_NOFILE', 'RLIMIT_FSIZE', 'RLIMIT_CPU')]")
    events, stderr = asyncio.run(_run_over_stdio("python", source, open_files=64,
                                                 file_bytes=1 << 20, cpu_seconds=30))
    assert isinstance(events[-1], Done) and events[-1].value == [64, 1 << 20, 30], stderr


#: The flags of the carrier's stdin (the guest's parent, a shell), as the
#: program sees them: O_ASYNC is 0o20000.
CARRIER_FLAGS = ("import os\n"
                 "info = open(f'/proc/{os.getppid()}/fdinfo/0').read()\n"
                 "return int(info.split('flags:')[1].split()[0], 8) & 0o20000")


def test_the_python_guest_leaves_its_carriers_stdin_as_it_was() -> None:
    """R-STDIO-7: the guest watches its channel for the end of the stream
    with O_ASYNC, which is a flag of the open file description. A carrier
    that holds the same pipe (here a shell that waits for the guest) keeps
    its own flags: the guest reopens the pipe for itself."""
    guest = guest_command("python", "/", Limits()).argv
    argv = ["sh", "-c", '"$@"; exit $?', "sh", *guest]
    events, stderr = asyncio.run(_run_over_stdio("python", CARRIER_FLAGS, argv))
    assert isinstance(events[-1], Done) and events[-1].value == 0, (events[-1], stderr)


#: A program that swallows the cancellation of its call and calls again.
CALLS_ON = {
    "python": "try:\n    await f()\nexcept BaseException:\n    pass\nawait f()\nreturn 1",
    "python-asyncio": "import asyncio\ntry:\n    await f()\nexcept BaseException:\n    pass\n"
                      "await f()\nreturn 1",
    "javascript": "try { await f() } catch (e) {}\nawait f()\nreturn 1",
}


@pytest.mark.parametrize("program", list(CALLS_ON))
def test_after_the_end_of_its_stream_the_guest_sends_no_call(program: str) -> None:
    """R-TRANS-4: the host's stream ends while the program waits on a
    call; the program swallows its cancellation and calls again: that call
    raises at once, without a frame, and the guest ends with DONE."""
    language = program.partition("-")[0]
    if language == "javascript" and shutil.which("node") is None:
        pytest.skip("Node.js is not installed")

    events, stderr = asyncio.run(_run_over_stdio(language, CALLS_ON[program],
                                                 bindings=(Binding("f"),), at_call=_end_stream))
    assert [type(e).__name__ for e in events if not isinstance(e, Hello)] == ["Call", "Done"]
    done = events[-1]
    assert isinstance(done, Done) and done.error is not None, (done, stderr)


#: Cancelled where it waits, the program winds down: it calls ``g`` while
#: the host's SIGTERM comes, then prints.
WINDS_DOWN = {  # and the line it waits on, and what it raised there
    "python-own-loop": ("import asyncio\nasync def main():\n    try:\n        await f()\n"
                       "    finally:\n        try:\n            await g()\n"
                       "        except Exception:\n            pass\n"
                       "        print('cleanup')\nasyncio.run(main())\n", 4,
                        "asyncio.exceptions.CancelledError"),
    "python-top-level": ("try:\n    await f()\nfinally:\n    try:\n        await g()\n"
                        "    except Exception:\n        pass\n    print('cleanup')\n", 2,
                         "ProgramCancelled"),
}


@pytest.mark.parametrize("program", list(WINDS_DOWN))
def test_a_sigterm_after_a_delivered_cancel_leaves_the_cleanup_alone(program: str) -> None:
    """R-CANCEL-2, R-CANCEL-3: the CANCEL read where the program waits is
    its one interruption; the SIGTERM that follows it (R-TERM-2) does not
    stop the cleanup the cancellation started."""
    source, line, raised = WINDS_DOWN[program]
    events, _ = asyncio.run(_run_over_stdio("python", source, bindings=(
        Binding("f"), Binding("g")), at_call=_cancel_then_terminate))
    printed = "".join(e.text for e in events if isinstance(e, Output))
    done = events[-1]
    assert printed == "cleanup\n", events
    assert isinstance(done, Done) and done.error is not None and done.error.line == line, done
    assert done.error.traceback.endswith(raised + "\n"), done


async def _cancel_then_terminate(call: Call, process: asyncio.subprocess.Process,
                                 host: Connection) -> None:
    """CANCEL at the CALL of ``f``; SIGTERM to the guest at the next one,
    then that call answered as cancelled."""
    assert process.stdin is not None
    if call.name == "f":
        process.stdin.write(host.send(Cancel(reason="timeout")))
        return
    process.send_signal(signal.SIGTERM)
    await asyncio.sleep(0.2)  # the signal is handled before the answer
    process.stdin.write(host.send(Result(id=call.id, error=CallError(
        ErrorCode.CANCELLED, "Cancelled", "the run was cancelled"))))
