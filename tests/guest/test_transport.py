"""R-STDIO-4: the transport is chosen by TETHER_TRANSPORT. A guest asked for
one it does not speak says so on fd 2 and exits before sending anything: the
Node guest speaks fd 3 only, the CPython guest fd 3 and stdio (the
conformance suite runs it over stdio, tests/conformance)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile

import pytest

from tether.host.guests import Interpreters, guest_command
from tether.host.limits import Limits
from tether.host.process import spawn


async def _start(language: str, transport: str) -> tuple[int, str, bytes]:
    workdir = tempfile.mkdtemp(prefix="tether-transport-")
    try:
        command = guest_command(language, workdir, Limits(), Interpreters())
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
    ("python", "carrier-pigeon"), ("javascript", "carrier-pigeon"), ("javascript", "stdio")])
def test_a_guest_asked_for_a_transport_it_lacks_says_so_and_exits(language: str,
                                                                   transport: str) -> None:
    if language == "javascript" and shutil.which("node") is None:
        pytest.skip("Node.js is not installed")
    code, stderr, received = asyncio.run(_start(language, transport))
    assert code != 0
    assert transport in stderr
    assert received == b""  # not even HELLO on fd 3
