"""The attack suite: hostile programs against the namespaces sandbox.

Each test runs a real program that attacks the host, the machine or the
protocol, and checks the status the host returned, that the attack failed,
and (through the session's leak check) that nothing was left behind. The
host process surviving the suite is part of the assertion.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether import RunResult, Runtime, Status
from tether.codec import Call, FrameType, Output, Stream, encode_frame, encode_payload
from tether.host.aio.channel import READ_SIZE
from tether.host.aio.reader import TURN_BYTES, Reader
from tether.host.sandbox.profiles import detect

from .conftest import (
    BLOCK,
    MARKER,
    cancellation_probe,
    no_marked_processes,
    pick,
    quick,
    run,
    write_fd3,
)

pytestmark = pytest.mark.skipif(not detect().namespaces, reason=detect().detail)

SANDBOX = {"sandbox": "namespaces"}


def attack(source: str, **kwargs: Any) -> Any:
    return run(source, **SANDBOX, **kwargs)


# -- the machine and the host -------------------------------------------------------


def test_kill_every_process_the_program_can_see(lang: str) -> None:
    """os.kill(-1, 9) as root without a PID namespace kills nearly everything."""
    source = pick(lang, python="import os\nos.kill(-1, 9)\nreturn 'survived'",
                  javascript="process.kill(-1, 'SIGKILL')\nreturn 'survived'")
    result = attack(source, language=lang)
    # It may reach nothing at all (ESRCH) or only itself; the host is unharmed.
    assert result.status in (Status.ERROR, Status.CRASHED), result
    assert os.getppid() > 0


def test_signals_to_the_parent_and_the_group(lang: str) -> None:
    source = pick(lang,
                  python="import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
                         "os.kill(1, signal.SIGKILL)\nreturn os.getppid()",
                  javascript="process.kill(process.ppid, 'SIGKILL')\nprocess.kill(1, 'SIGKILL')\n"
                             "return process.ppid")
    result = attack(source, language=lang)
    assert (result.status, result.value) == (Status.OK, 1)  # the namespace's init, unharmed


def test_the_host_environment_and_secrets_are_out_of_reach(lang: str) -> None:
    secret_dir = Path(tempfile.mkdtemp(prefix="tether-secret-"))
    secret = secret_dir / "secret.txt"
    secret.write_text("hunter2")
    os.environ["TETHER_TEST_SECRET"] = "hunter2"
    try:
        source = pick(lang, python=f"""
import os
found = []
for path in [{str(secret)!r}, "/proc/1/environ", "/root/.bash_history", "/etc/shadow",
             {str(Path(__file__))!r}, "/proc/{os.getpid()}/environ"]:
    try:
        found.append(open(path).read()[:20])
    except OSError:
        pass
return [found, os.environ.get("TETHER_TEST_SECRET"), sorted(os.listdir("/root"))]
""", javascript=f"""
const fs = require('fs')
const found = []
for (const path of [{str(secret)!r}, '/proc/1/environ', '/root/.bash_history', '/etc/shadow',
                    {str(Path(__file__))!r}, '/proc/{os.getpid()}/environ']) {{
  try {{ found.push(fs.readFileSync(path, 'utf8').slice(0, 20)) }} catch {{}}
}}
return [found, process.env.TETHER_TEST_SECRET ?? null, fs.readdirSync('/root').sort()]
""")
        found, env_secret, root_listing = attack(source, language=lang).value
    finally:
        del os.environ["TETHER_TEST_SECRET"]
        secret.unlink()
        secret_dir.rmdir()
    assert all("hunter2" not in text for text in found)
    assert env_secret is None
    # Only the interpreter's own directory, and for Node tether's cache of
    # startup snapshots (host/guests/node_snapshot.py), where they are under /root.
    assert set(root_listing) <= {".pyenv", ".cache"}
    assert ".cache" not in root_listing or lang == "javascript"


def test_writes_outside_the_work_directory_fail_or_stay_inside(lang: str) -> None:
    marker = f"tether-escape-{os.getpid()}"
    source = pick(lang, python=f"""
import os
results = []
for path in ["/usr/{marker}", "/etc/{marker}", "/tmp/{marker}"]:
    try:
        open(path, "w").write("x")
        results.append("wrote")
    except OSError as e:
        results.append(e.errno)
return results
""", javascript=f"""
const fs = require('fs')
return ['/usr/{marker}', '/etc/{marker}', '/tmp/{marker}'].map((p) => {{
  try {{ fs.writeFileSync(p, 'x'); return 'wrote' }} catch (e) {{ return e.code }}
}})
""")
    results = attack(source, language=lang).value
    assert results[:2] != ["wrote", "wrote"]  # /usr is read-only, /etc is not there
    assert results[2] == "wrote"  # a private /tmp...
    assert not Path("/tmp", marker).exists()  # ...that is not the host's


def test_no_network(lang: str) -> None:
    source = pick(lang, python="""
import socket
out = []
for attempt in (lambda: socket.create_connection(("127.0.0.1", 22), timeout=2),
                lambda: socket.getaddrinfo("example.com", 80),
                lambda: socket.create_connection(("10.0.0.1", 80), timeout=2)):
    try:
        attempt()
        out.append("connected")
    except OSError as e:
        out.append(type(e).__name__)
return out
""", javascript="""
const net = require('net'), dns = require('dns').promises
const tryConnect = (host, port) => new Promise((resolve) => {
  const s = net.connect({ host, port, timeout: 2000 })
  s.on('connect', () => { s.destroy(); resolve('connected') })
  s.on('error', (e) => resolve(e.code)); s.on('timeout', () => { s.destroy(); resolve('timeout') })
})
let lookup
try { await dns.lookup('example.com'); lookup = 'resolved' } catch (e) { lookup = e.code }
return [await tryConnect('127.0.0.1', 22), lookup, await tryConnect('10.0.0.1', 80)]
""")
    assert "connected" not in attack(source, language=lang).value
    assert "resolved" not in attack(source, language=lang).value


# -- processes --------------------------------------------------------------------


def test_fork_bomb(lang: str) -> None:
    source = pick(lang, python=f"""
import os, sys
children = 0
try:
    while True:
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)",
                                      "{MARKER}"])
        children += 1
except OSError as e:
    return ["stopped", children < 300]
""", javascript=f"""
const {{ spawn }} = require('child_process')
let children = 0
try {{
  for (;;) {{
    const c = spawn(process.execPath, ['-e', 'setTimeout(() => {{}}, 60000)', '{MARKER}'])
    if (!c.pid) throw new Error('spawn failed')
    c.on('error', () => {{}})
    children++
    if (children > 1000) break
  }}
}} catch (e) {{ return ['stopped', children < 300] }}
return ['not stopped', children]
""")
    result = attack(source, language=lang, limits=quick(processes=64, timeout=20))
    assert result.status in (Status.OK, Status.ERROR, Status.CRASHED), result.error
    if result.status is Status.OK:
        assert result.value == ["stopped", True]
    assert no_marked_processes()


def test_thread_bomb() -> None:
    source = """
import threading, time
threads = 0
try:
    while True:
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        threads += 1
except RuntimeError:
    return ["stopped", threads < 300]
"""
    assert attack(source, limits=quick(processes=64)).value == ["stopped", True]


#: Leaves a process in a session of its own that ignores SIGTERM and has
#: closed every descriptor it had from the run.
ESCAPEE = {"python": f"""
import os, signal, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for fd in (0, 1, 2, 3):
            os.close(fd)
        os.execv(sys.executable, [sys.executable, "-c",
                 "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                 "time.sleep(120)", "{MARKER}"])
    os._exit(0)
time.sleep(0.3)
""", "javascript": f"""
const {{ spawn }} = require('child_process')
const code = "process.on('SIGTERM', () => {{}}); setInterval(() => {{}}, 1000)"
spawn(process.execPath, ['-e', code, '{MARKER}'], {{ detached: true, stdio: 'ignore' }}).unref()
await new Promise((r) => setTimeout(r, 300))
"""}


def test_setsid_double_fork_escapee_ignoring_sigterm(lang: str) -> None:
    source = ESCAPEE[lang] + pick(lang, python="return 'spawned'", javascript="return 'spawned'")
    assert attack(source, language=lang).value == "spawned"
    assert no_marked_processes()


def test_infinite_loop_with_calls_in_flight(lang: str) -> None:
    slow, cancelled = cancellation_probe()
    source = pick(lang, python="import asyncio\nasyncio.ensure_future(slow())\n"
                               "await asyncio.sleep(0.1)\nwhile True:\n    pass",
                  javascript="slow()\nawait new Promise((r) => setTimeout(r, 100))\nwhile (true) {}")
    result = attack(source, language=lang, bindings=[slow], limits=quick(timeout=1))
    assert result.status is Status.TIMEOUT
    assert cancelled.is_set()


# -- the protocol -------------------------------------------------------------------


def _forge(lang: str, frame_hex: str) -> str:
    return write_fd3(lang, bytes.fromhex(frame_hex)) + BLOCK[lang]


def test_deeply_nested_cbor(lang: str) -> None:
    payload = "a1" + "6576616c7565" + "81" * 100_000 + "00"  # {"value": [[[...]]]}
    header = f"5448010600{0:02x}{len(payload) // 2:08x}"
    result = attack(_forge(lang, header + payload), language=lang)
    assert result.status is Status.PROTOCOL_ERROR
    assert result.error is not None and "MALFORMED_PAYLOAD" in result.error.message


def test_invalid_utf8_in_output(lang: str) -> None:
    payload = "a2647465787462fffe6673747265616d66737464657272"  # text: ff fe
    header = f"5448010500{0:02x}{len(payload) // 2:08x}"
    result = attack(_forge(lang, header + payload), language=lang)
    assert result.status is Status.PROTOCOL_ERROR


def test_dup2_over_fd_3(lang: str) -> None:
    source = pick(lang,
                  python="import os, time\nos.dup2(os.open('/dev/null', os.O_WRONLY), 3)\n"
                         "print('after')\ntime.sleep(10)",
                  javascript="const fs = require('fs')\nfs.closeSync(3)\n"
                             "fs.openSync('/dev/null', 'w')\nconsole.log('after')\n"
                             + BLOCK["javascript"])
    result = attack(source, language=lang, limits=quick(timeout=3))
    assert result.status in (Status.CRASHED, Status.TIMEOUT)


def test_ten_thousand_concurrent_calls(lang: str) -> None:
    peak = 0
    active = 0

    async def one(i: int) -> int:
        nonlocal peak, active
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0)
        active -= 1
        return i

    source = pick(lang,
                  python="import asyncio\nreturn len(await asyncio.gather(*(one(i) for i in "
                         "range(10_000))))",
                  javascript="return (await Promise.all([...Array(10000).keys()]"
                             ".map((i) => one(i)))).length")
    result = attack(source, language=lang, bindings=[one], limits=quick(timeout=60))
    assert result.value == 10_000
    assert peak <= 64


def test_a_million_nested_lists(lang: str) -> None:
    source = pick(lang, python="x = []\nfor _ in range(10**6):\n    x = [x]\nreturn x",
                  javascript="let x = []\nfor (let i = 0; i < 1e6; i++) x = [x]\nreturn x")
    result = attack(source, language=lang)
    assert result.status is Status.ERROR
    assert result.error is not None and "nested too deeply" in result.error.message


def test_recursion(lang: str) -> None:
    source = pick(lang, python="def f(n):\n    return f(n + 1)\nf(0)",
                  javascript="function f(n) { return f(n + 1) }\nf(0)")
    result = attack(source, language=lang)
    assert result.status is Status.ERROR
    assert result.error is not None
    assert result.error.type == pick(lang, python="RecursionError", javascript="RangeError")


def test_recursion_limit_abuse() -> None:
    source = "import sys\nsys.setrecursionlimit(10**9)\ndef f(n):\n    return f(n + 1)\nf(0)"
    result = attack(source, limits=quick(memory_bytes=128 << 20, timeout=30))
    # CPython 3.11+ keeps Python frames off the C stack: memory runs out first,
    # after seconds of work; whichever way it ends, it ends contained.
    assert result.status in (Status.CRASHED, Status.ERROR, Status.LIMIT), result


def test_node_escape_hatches() -> None:
    source = """
const vm = require('vm')
const { execSync } = require('child_process')
const inContext = vm.runInNewContext('this.constructor.constructor("return process")()' +
                                     '.getuid()')
const shell = execSync('id -u; cat /etc/shadow 2>&1 || true').toString()
let binding
try { binding = typeof process.binding('fs') } catch (e) { binding = e.code }
return [inContext, shell, binding]
"""
    uid, shell, _ = attack(source, language="javascript").value
    assert uid == 65534
    assert shell.startswith("65534") and "root:" not in shell


# -- holding the host ------------------------------------------------------------------


@contextlib.contextmanager
def hang_guard(seconds: float) -> Iterator[None]:
    """Fails the test if it takes longer than ``seconds``: a SIGALRM, since a
    frozen event loop would never run a timeout of its own."""

    def hung(signum: int, frame: Any) -> None:
        raise AssertionError(f"still running after {seconds:g} s: the host hangs")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.filterwarnings("ignore:tether. sandbox='process'")
def test_a_guest_that_exits_with_large_results_unread_while_a_descendant_holds_fd_3_ends() -> None:
    # Enough results that the host's unsent bytes pass OUTBOX_LIMIT and it
    # stops reading; a process of the run outlives the guest with fd 3 open.
    calls = b"".join(encode_frame(FrameType.CALL, encode_payload(
        Call(id=1000 + i, name="big", args=[], kwargs={}).to_wire())) for i in range(20))
    source = f"""
import os, sys, time
os.set_inheritable(3, True)
if os.fork() == 0:
    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(20)", "{MARKER}"])
os.write(3, {calls!r})
time.sleep(1.5)
os._exit(0)
"""
    text = "x" * 900_000

    async def big() -> str:
        return text

    with hang_guard(40):
        result = run(source, sandbox="process", bindings=[big], limits=quick(timeout=20))
    assert result.status is Status.CRASHED, result.error
    assert no_marked_processes()


@pytest.mark.parametrize("frame", [
    encode_frame(FrameType.OUTPUT, encode_payload(Output(stream=Stream.STDOUT, text="").to_wire())),
    encode_frame(0x80, b""),  # an extension frame: discarded (R-FRAME-7)
], ids=["output", "extension"])
def test_a_flood_of_tiny_frames_is_taken_a_turns_worth_at_a_time(
        frame: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    # Bytes read per turn of the loop, counted by a callback that runs once
    # a turn: the reader pauses reading once a turn's budget is spent.
    turns = 0
    ticking = True
    fed: collections.Counter[int] = collections.Counter()
    feed = Reader.feed

    def counted(self: Reader, data: bytes) -> None:
        fed[turns] += len(data)
        feed(self, data)

    def tick() -> None:
        nonlocal turns
        turns += 1
        if ticking:
            asyncio.get_running_loop().call_soon(tick)

    monkeypatch.setattr(Reader, "feed", counted)
    source = f"""
import os
chunk = {frame!r} * (65536 // {len(frame)})
while True:
    os.write(3, chunk)
"""

    async def flood() -> RunResult:
        nonlocal ticking
        async with Runtime() as rt:
            asyncio.get_running_loop().call_soon(tick)
            try:
                return await rt.run(source, sandbox="namespaces", limits=quick(timeout=2))
            finally:
                ticking = False

    result = asyncio.run(flood())
    assert result.status is Status.TIMEOUT
    assert sum(fed.values()) > 4 * TURN_BYTES  # it did flood
    assert max(fed.values()) <= TURN_BYTES + READ_SIZE


def test_after_a_timeout_nothing_is_read_while_a_large_frame_is_being_decoded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The program ignores SIGTERM and sends a CALL that is slow to decode,
    # then frames as fast as the host reads them, again and again; the
    # timeout comes while the decoding thread has the connection.
    busy_fed = 0
    feed = Reader.feed

    def counted(self: Reader, data: bytes) -> None:
        nonlocal busy_fed
        if self.busy:
            busy_fed += len(data)
        feed(self, data)

    monkeypatch.setattr(Reader, "feed", counted)
    filler = encode_frame(FrameType.OUTPUT, encode_payload(
        Output(stream=Stream.STDOUT, text="y" * 60_000).to_wire()))
    source = f"""
import os, signal
signal.signal(signal.SIGTERM, signal.SIG_IGN)
items = 400_000   # a CALL of as many short strings
payload = (b"\\xa4\\x62id\\x01\\x64args\\x9a" + items.to_bytes(4, "big")
           + (b"\\x78\\x20" + b"x" * 32) * items + b"\\x64name\\x64nope\\x66kwargs\\xa0")
big = b"TH\\x01\\x03\\x00\\x00" + len(payload).to_bytes(4, "big") + payload
filler = {filler!r} * 16
def send(data):
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(3, view):]
        except BaseException:   # the guest's interruption at CANCEL
            pass
while True:
    try:
        send(big)
        while True:
            send(filler)
    except BaseException:
        pass
"""
    result = attack(source, limits=quick(timeout=0.5, kill_grace=0.5))
    assert result.status is Status.TIMEOUT
    assert busy_fed <= READ_SIZE  # one read at most, then reading pauses
