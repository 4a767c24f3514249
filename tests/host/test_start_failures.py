"""A guest that cannot be started: the run still returns a result
(status ``crashed``), the host signals nothing that is not its run's, and
nothing is left behind."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile

import pytest

from tether.host.guests.process import CappedBuffer, Child
from tether.host.guests.zygote import ZygoteError, _pid_of
from tether.host.sandbox.profiles import detect

#: Runs once, then again with almost no descriptors left to the host, then
#: once more: prints each result's status and error.
OUT_OF_DESCRIPTORS = """
import asyncio, json, os, resource, sys, warnings
import tether
warnings.simplefilter("ignore", RuntimeWarning)

async def main():
    language, profile, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    pool = tether.PoolConfig(size=size, prestart=(language,) if size else ())
    async with tether.Runtime(sandbox=profile, pool=pool) as rt:
        statuses = [(await rt.run("return 1", language=language)).status]
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 2, hard))
        try:
            starved = [await rt.run("return 1", language=language) for _ in range(3)]
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        statuses += [r.status for r in starved]
        errors = [r.error.type + ": " + r.error.message for r in starved if r.error]
        statuses.append((await rt.run("return 1", language=language)).status)
    print(json.dumps({"statuses": statuses, "errors": errors}))

asyncio.run(main())
"""


@pytest.mark.parametrize("size", [0, 2], ids=["cold", "warm"])
@pytest.mark.parametrize("profile", ["process", "namespaces"])
def test_a_host_out_of_descriptors_gets_crashed_results_then_recovers(
        lang: str, profile: str, size: int) -> None:
    if profile == "namespaces" and not detect().namespaces:
        pytest.skip("needs bwrap namespaces")
    workdir = tempfile.mkdtemp(prefix="tether-starved-")
    env = {**os.environ, "TMPDIR": workdir}
    done = subprocess.run([sys.executable, "-c", OUT_OF_DESCRIPTORS, lang, profile, str(size)],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["statuses"][0] == "ok"
    assert seen["statuses"][-1] == "ok"  # the host recovered
    assert set(seen["statuses"][1:-1]) <= {"ok", "crashed"}
    assert all(e.startswith("GuestCrashed: ") for e in seen["errors"])
    assert "cannot be forked" not in done.stderr  # a passing shortage: forking goes on
    assert os.listdir(workdir) == []  # no work directory left behind
    os.rmdir(workdir)


def test_a_reaped_process_has_no_pid_the_host_would_signal() -> None:
    """The template may reap a forked guest that died at once before the
    host reads its pidfd; the kernel then reports pid -1, which must never
    reach killpg (-1 would mean every process the host may signal)."""
    child = subprocess.Popen(["/bin/true"])
    pidfd = os.pidfd_open(child.pid)
    try:
        child.wait()
        with pytest.raises(ZygoteError, match="exited before"):
            _pid_of(pidfd)
    finally:
        os.close(pidfd)


def test_a_child_without_a_pid_signals_nothing() -> None:
    async def go() -> None:
        host_end, other = socket.socketpair()
        other.close()
        child = Child(pid=-1, channel=host_end, raw_stdout=CappedBuffer(0),
                      raw_stderr=CappedBuffer(0),
                      exited=asyncio.get_running_loop().create_future())
        child.signal_group(9)  # neither raises nor reaches anything
        host_end.close()

    asyncio.run(go())
