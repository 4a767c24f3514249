"""The CPython shim: its rehearsal (a whole run's path, against an in-memory
host, that leaves the process as it found it), its DONE errors, and what it
does with a SIGTERM before its RUN."""

from __future__ import annotations

import asyncio
import shutil
import signal
import sys
import tempfile

import pytest

from tether.codec import (
    NEED_DATA,
    Call,
    Connection,
    Done,
    Hello,
    Output,
    ProgramError,
    Role,
    encode_payload,
)
from tether.guest.python import shim
from tether.host.guests import Interpreters, guest_command
from tether.host.limits import Limits
from tether.host.process import spawn


def test_the_rehearsal_takes_a_run_through_the_whole_guest_path() -> None:
    stdout, stderr = sys.stdout, sys.stderr
    seen = shim.rehearse()
    assert (sys.stdout, sys.stderr) == (stdout, stderr)
    assert [type(m) for m in seen] == [Hello, Call, Output, Done]
    assert seen[-1].value == [1, {"a": 1.5, "b": None}]


@pytest.mark.parametrize("budget", [1 + 1024, 2000, 4096 + 1024])
def test_a_done_error_is_made_valid_text_and_shortened_to_fit(budget: int) -> None:
    """R-DONE-7: the traceback goes first, then the message, cut at a code
    point with an ellipsis; lone surrogates become U+FFFD."""
    error = ProgramError(type="E" * 300, message="bad \udc80 " + "é" * 3000,
                         traceback="Traceback\n" + "x" * 10000, line=3)
    fitted = shim.fit_error(error, budget)
    assert len(encode_payload({"error": fitted.to_wire()})) <= budget
    assert len(fitted.type.encode()) <= shim.MAX_ERROR_TYPE_BYTES
    assert fitted.line == 3
    for text in (fitted.message, fitted.traceback):
        text.encode()  # valid text
        assert not text or text.endswith("\u2026") or text == error.message
    if fitted.message:
        assert fitted.message.startswith("bad \ufffd ")
    small = ProgramError(type="ValueError", message="no", traceback="")
    assert shim.fit_error(small, budget) == small


async def _terminated_while_waiting() -> int:
    """A guest's exit status, sent SIGTERM after its HELLO, before any RUN."""
    workdir = tempfile.mkdtemp(prefix="tether-shim-")
    try:
        command = guest_command("python", workdir, Limits(), Interpreters())
        child = spawn(command.argv, command.env, raw_output_bytes=65536)
        try:
            conn, loop = Connection(Role.HOST), asyncio.get_running_loop()
            while (event := conn.next_event()) is NEED_DATA:
                conn.receive_data(await asyncio.wait_for(loop.sock_recv(child.channel, 65536), 10))
            assert isinstance(event, Hello)
            await asyncio.sleep(0.1)  # past the HELLO, into the wait for RUN
            child.signal_group(signal.SIGTERM)
            return await asyncio.wait_for(asyncio.shield(child.exited), 10)
        finally:
            await child.terminate(0.2, kill_now=True)
            child.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def test_a_guest_waiting_for_its_run_dies_of_a_sigterm() -> None:
    """The handler that tells the host's SIGTERM from the program's is set
    before RUN comes (R-CANCEL-3); until then a SIGTERM ends the guest as the
    signal's default would, without a word on the channel."""
    assert asyncio.run(_terminated_while_waiting()) == -signal.SIGTERM
