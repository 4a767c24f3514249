"""The seccomp filter and Landlock, attacked from real programs.

Every call the default filter denies is made from Python through ctypes in
every profile and start mode (forked from the template, spawned into a
pool, cold at the run) and must fail with the documented error. Arguments
are chosen so that a call that reached the kernel would fail harmlessly
(bad pointers, invalid flag combinations) rather than change the machine:
any other error than the filter's means the filter let it through. Node
reaches some of them through the programs it can start. Under ``process``,
Landlock must stop writes outside the work directory, ``kill(-1, 9)`` and
connecting to an abstract socket the test listens on.
"""

from __future__ import annotations

import asyncio
import errno
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether import PoolConfig, RunResult, Runtime, Status, SyscallFilter
from tether.conformance.runner import NOT_APPLICABLE, check_guest, our_guest
from tether.host.guests.languages import GuestCommand
from tether.host.sandbox import confinement, seccomp
from tether.host.sandbox.profiles import detect
from tether.host.sandbox.seccomp import CLONE_NAMESPACES, CLONE_NEWTIME, available

from .conftest import MARKER, _Shared, pick

pytestmark = pytest.mark.skipif(available() is not None, reason=str(available()))

PROFILES = ["process"] + (["namespaces"] if detect().namespaces else [])
#: How a guest is started: forked from the template at the run, spawned
#: ahead into a pool, or spawned at the run.
STARTS = {"forked": PoolConfig(size=0), "spawned": PoolConfig(size=1, fork_server=False),
          "cold": None}
MODES = [(p, s) for p in PROFILES for s in STARTS]
LANDLOCK = confinement.landlock_version()

_CLONE_THREAD, _CLONE_VFORK = 0x00010000, 0x00004000
_BAD = 0xFFFF_FFFF_FFFF_FFFF  # a bad pointer, an invalid flag set, an unknown command
_X32 = 0x40000000


def _number(name: str) -> int:
    import pyseccomp as sc

    return int(sc.resolve_syscall(sc.Arch.NATIVE, name))


def _cases() -> dict[str, tuple[str, tuple[int, ...], int]]:
    """case id -> (call, arguments, the errno the filter answers)."""
    cases: dict[str, tuple[str, tuple[int, ...], int]] = {}
    for name in SyscallFilter().denied():
        if _number(name) < 0 or name in ("clone", "unshare", "personality"):
            continue
        cases[name] = (name, (_BAD,) * 6, errno.ENOSYS if name == "clone3" else errno.EPERM)
    for flag, bit in CLONE_NAMESPACES.items():
        # CLONE_THREAD without CLONE_SIGHAND, CLONE_VFORK in unshare: EINVAL past the filter.
        cases[f"clone-{flag}"] = ("clone", (bit | _CLONE_THREAD, 0, 0, 0, 0), errno.EPERM)
        cases[f"unshare-{flag}"] = ("unshare", (bit | _CLONE_VFORK,), errno.EPERM)
    cases["unshare-CLONE_NEWTIME"] = ("unshare", (CLONE_NEWTIME | _CLONE_VFORK,), errno.EPERM)
    # The calls the issue found succeeding, as a program would make them.
    cases["unshare(CLONE_NEWUSER)"] = ("unshare", (CLONE_NAMESPACES["CLONE_NEWUSER"],),
                                       errno.EPERM)
    cases["personality(0xffffffff)"] = ("personality", (0xFFFFFFFF,), errno.EPERM)
    cases["personality(READ_IMPLIES_EXEC)"] = ("personality", (0x0400000,), errno.EPERM)
    cases["ptrace(PTRACE_TRACEME)"] = ("ptrace", (0, 0, 0, 0), errno.EPERM)
    if os.uname().machine == "x86_64":  # the x32 ABI: the same calls with bit 30 set
        cases["x32 getpid"] = ("getpid", (), errno.EPERM)
    return cases


CASES = _cases()
#: The calls on IPC-namespace objects, denied only under ``process``: case id
#: -> (call, arguments). The get calls only look (no IPC_CREAT), so that one
#: the filter let through would make nothing.
IPC_CASES = {f"ipc {name}": (name, {"shmget": (_BAD, _BAD, 0), "msgget": (_BAD, 0),
                                    "semget": (_BAD, _BAD, 0)}.get(name, (_BAD,) * 6))
             for name in seccomp.SHARED_IPC if _number(name) >= 0}

#: Makes every case's call and reports errno (0: it succeeded); then checks
#: that what a program does need still works.
ATTACK = """
import ctypes, os, threading, subprocess
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
out = {}
for case, (number, args) in CASES.items():
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(number), *(ctypes.c_ulong(a) for a in args))
    out[case] = ctypes.get_errno() if r == -1 else 0
t = threading.Thread(target=lambda: None); t.start(); t.join()
out["fork"] = os.waitpid(os.fork() or os._exit(7), 0)[1] >> 8
out["subprocess"] = subprocess.run(["/bin/true"]).returncode
out["personality(PER_LINUX)"] = libc.personality(0)
return out
"""


def _runtime(profile: str, start: str) -> Runtime:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "process as root"
        return Runtime(sandbox=profile, pool=STARTS[start])


class _Runtimes:
    """One Runtime per (profile, start), on the session's loop."""

    def __init__(self) -> None:
        self.runtimes: dict[tuple[str, str], Runtime] = {}
        self.attacks: dict[tuple[str, str], RunResult] = {}

    def run(self, profile: str, start: str, source: str, **kwargs: Any) -> RunResult:
        assert _Shared.loop is not None
        key = (profile, start)
        if key not in self.runtimes:
            self.runtimes[key] = _runtime(profile, start)
            _Shared.loop.run_until_complete(self.runtimes[key].__aenter__())
        return _Shared.loop.run_until_complete(self.runtimes[key].run(source, **kwargs))

    def attack(self, profile: str, start: str) -> RunResult:
        if (profile, start) not in self.attacks:
            program = {case: (_number(name) | (_X32 if case.startswith("x32") else 0), args)
                       for case, (name, args, _) in CASES.items()}
            program |= {case: (_number(name), args) for case, (name, args) in IPC_CASES.items()}
            self.attacks[profile, start] = self.run(
                profile, start, f"CASES = {program!r}\n{ATTACK}")
        return self.attacks[profile, start]

    def close(self) -> None:
        assert _Shared.loop is not None
        for runtime in self.runtimes.values():
            _Shared.loop.run_until_complete(runtime.aclose())


@pytest.fixture(scope="module")
def runtimes() -> Iterator[_Runtimes]:
    held = _Runtimes()
    yield held
    held.close()


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize(("profile", "start"), MODES)
def test_a_denied_call_fails(runtimes: _Runtimes, profile: str, start: str, case: str) -> None:
    result = runtimes.attack(profile, start)
    assert result.status is Status.OK, result.error
    expected = CASES[case][2]
    assert result.value[case] == expected, (
        f"{case}: errno {errno.errorcode.get(result.value[case], result.value[case])}, "
        f"expected {errno.errorcode[expected]}")


@pytest.mark.parametrize("case", list(IPC_CASES))
@pytest.mark.parametrize(("profile", "start"), MODES)
def test_ipc_calls_are_denied_where_a_run_has_no_ipc_namespace(
        runtimes: _Runtimes, profile: str, start: str, case: str) -> None:
    """Under namespaces the run's own IPC namespace holds what these calls
    make (they reach the kernel, which refuses the bad arguments); under
    process they would reach the machine's, so the filter refuses them."""
    result = runtimes.attack(profile, start)
    assert result.status is Status.OK, result.error
    answer = result.value[case]
    if profile == "process":
        assert answer == errno.EPERM, errno.errorcode.get(answer, answer)
    else:
        assert answer not in (0, errno.EPERM), errno.errorcode.get(answer, answer)


@pytest.mark.parametrize(("profile", "start"), MODES)
def test_what_programs_need_still_works(runtimes: _Runtimes, profile: str, start: str) -> None:
    value = runtimes.attack(profile, start).value
    assert (value["fork"], value["subprocess"], value["personality(PER_LINUX)"]) == (7, 0, 0)


NODE_MODES = [(p, s) for p, s in MODES if s != "forked"]  # no fork server for Node


#: Programs a Node program can start to reach a denied call: argv, and the call.
NODE_REACHES = {"unshare": ["/usr/bin/unshare", "--user", "/bin/true"],
                "setns": ["/usr/bin/nsenter", "--target", "1", "--user", "/bin/true"],
                "chroot": ["/usr/sbin/chroot", "/", "/bin/true"]}


@pytest.mark.parametrize(("profile", "start"), NODE_MODES)
def test_node_runs_filtered_and_cannot_reach_denied_calls(runtimes: _Runtimes, profile: str,
                                                          start: str) -> None:
    """Node has no raw system calls; the filter shows in its status, and the
    programs it starts (which inherit the filter) are refused the calls."""
    source = f"""
const fs = require('fs'), cp = require('child_process')
const seccomp = fs.readFileSync('/proc/self/status', 'utf8').match(/Seccomp:\\s+(\\d)/)[1]
const out = {{}}
for (const [call, argv] of Object.entries({json.dumps(NODE_REACHES)})) {{
  const r = cp.spawnSync(argv[0], argv.slice(1), {{encoding: 'utf8'}})
  out[call] = [r.status, r.stderr]
}}
return [seccomp, out]
"""
    result = runtimes.run(profile, start, source, language="javascript")
    assert result.status is Status.OK, result.error
    seccomp_mode, out = result.value
    assert seccomp_mode == "2"
    for call, (status, stderr) in out.items():
        if call == "setns" and profile == "process" and LANDLOCK:
            # Landlock refuses the namespace file first: it is on nsfs, under no rule.
            assert status != 0 and "Permission denied" in stderr, stderr
            continue
        assert status != 0 and "Operation not permitted" in stderr, (call, stderr)


def test_a_runtime_can_allow_a_call_and_deny_another() -> None:
    async def go() -> RunResult:
        policy = SyscallFilter(allow=("personality",), deny=("getcpu",))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            runtime = Runtime(sandbox="process", pool=None, syscall_filter=policy)
        async with runtime:
            return await runtime.run(
                "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                "a = libc.personality(0xffffffff)\n"
                f"b = libc.syscall({_number('getcpu')}, None, None, None)\n"
                "return [a >= 0, b, ctypes.get_errno()]")

    assert asyncio.run(go()).value == [True, -1, errno.EPERM]


def test_a_filter_names_only_real_calls() -> None:
    with pytest.raises(ValueError, match="not denied by default"):
        SyscallFilter(allow=("read",))
    with pytest.raises(ValueError, match="no system call"):
        SyscallFilter(deny=("no_such_call",)).bpf()


def test_without_libseccomp_a_runtime_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> None:
        raise seccomp.SeccompUnavailable("libseccomp cannot be loaded (test)")

    monkeypatch.setattr(seccomp, "_library", missing)
    with pytest.warns(RuntimeWarning, match="without a seccomp filter"), \
            warnings.catch_warnings():
        warnings.filterwarnings("ignore", "tether: sandbox='process' as root")
        Runtime(sandbox="process", syscall_filter=SyscallFilter(deny=("getcpu", "getpid")))


def test_no_filter_at_all() -> None:
    async def go() -> RunResult:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            runtime = Runtime(sandbox="process", pool=None, syscall_filter=None)
        async with runtime:
            return await runtime.run(
                "return open('/proc/self/status').read().split('Seccomp:')[1].split()[0]")

    assert asyncio.run(go()).value == "0"


# -- the conformance suite and the benchmark programs under the filter ---------------


def _confined(language: str) -> Any:
    """Our guest as the process profile starts it: filtered and Landlocked."""
    plain = our_guest(language)
    bpf = SyscallFilter().bpf()

    def launch(workdir: str) -> GuestCommand:
        command = plain(workdir)
        argv = confinement.process_argv(command.argv, workdir, bpf, landlock=True,
                                        confines_itself=command.confines_itself,
                                        read=command.binds)
        return GuestCommand(argv, command.env)

    return launch


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_a_confined_guest_passes_the_conformance_suite(language: str) -> None:
    from tether.conformance import KNOWN_FAILURES
    from tether.conformance.cli import known_failures, load_all
    from tether.conformance.record import TRANSCRIPTS

    known = known_failures(KNOWN_FAILURES)

    async def go() -> list[str]:
        failed = []
        for transcript in load_all(TRANSCRIPTS):
            case = await check_guest(transcript, language, _confined(language), strict=True)
            if case.case_id in known:
                continue
            if case.verdict not in ("pass", "skip", NOT_APPLICABLE):
                failed.append(f"{transcript.scenario}: {case.detail}")
        return failed

    assert asyncio.run(go()) == []


def _bench_workloads() -> dict[str, dict[str, tuple[str, str]]]:
    path = Path(__file__).resolve().parents[2] / "bench" / "run.py"
    spec = importlib.util.spec_from_file_location("tether_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    workloads: dict[str, dict[str, tuple[str, str]]] = module.WORKLOADS
    return workloads


@pytest.mark.parametrize(("profile", "start"), MODES)
def test_the_benchmark_programs_run_filtered(runtimes: _Runtimes, profile: str,
                                             start: str) -> None:
    async def echo(x: Any) -> Any:
        return x

    for name, programs in _bench_workloads().items():
        for language, (program, _) in programs.items():
            if language == "javascript" and start == "forked":
                continue
            result = runtimes.run(profile, start, program, language=language,
                                  bindings=[echo])
            assert result.status is Status.OK, (name, language, result.error)


# -- Landlock, under the process profile ----------------------------------------------

LANDLOCK_MODES = [("process", s) for s in STARTS]
needs_landlock = pytest.mark.skipif(LANDLOCK < 1, reason="this kernel has no Landlock")
needs_scoping = pytest.mark.skipif(LANDLOCK < 6, reason="Landlock scoping needs ABI 6")


def _languages(start: str) -> list[str]:
    return ["python"] if start == "forked" else ["python", "javascript"]


@needs_landlock
@pytest.mark.parametrize(("profile", "start"), LANDLOCK_MODES)
def test_writing_or_reading_outside_the_work_directory_fails(
        runtimes: _Runtimes, profile: str, start: str) -> None:
    outside = Path(tempfile.mkdtemp(prefix="tether-landlock-"))
    (outside / "secret.txt").write_text("hunter2")
    try:
        for lang in _languages(start):
            source = pick(lang, python=f"""
out = []
for path, mode in (({str(outside / 'new.txt')!r}, "w"), ({str(outside / 'secret.txt')!r}, "r"),
                   ("/etc/hostname", "r"), ({confinement.LAUNCHER!r}, "a")):
    try:
        open(path, mode).close()
        out.append("opened")
    except OSError as exc:
        out.append(exc.errno)
open("mine.txt", "w").write("ok")
out.append(open("mine.txt").read())
return out
""", javascript=f"""
const fs = require('fs'), out = []
for (const [path, flag] of [[{str(outside / 'new.txt')!r}, 'w'], [{str(outside / 'secret.txt')!r}, 'r'],
                            ["/etc/hostname", "r"], [{confinement.LAUNCHER!r}, "a"]]) {{
  try {{ fs.closeSync(fs.openSync(path, flag)); out.push('opened') }} catch (e) {{ out.push(e.errno) }}
}}
fs.writeFileSync('mine.txt', 'ok')
out.push(fs.readFileSync('mine.txt', 'utf8'))
return out
""")
            result = runtimes.run(profile, start, source, language=lang)
            assert result.status is Status.OK, result.error
            codes = [abs(c) if isinstance(c, int) else c for c in result.value]
            assert codes == [errno.EACCES] * 4 + ["ok"], (lang, result.value)
        assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    finally:
        for path in outside.iterdir():
            path.unlink()
        outside.rmdir()


@needs_scoping
@pytest.mark.parametrize(("profile", "start"), LANDLOCK_MODES)
def test_kill_every_process_fails(runtimes: _Runtimes, profile: str, start: str) -> None:
    """kill(-1, 9) as root kills every process of the machine, unless the
    signal is scoped. The program first checks that it cannot signal its
    parent, and only then tries kill(-1, 9) (which reports success even when
    every signal was refused); a process of the test's must survive it."""
    canary = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", MARKER])
    try:
        for lang in _languages(start):
            source = pick(lang, python=f"""
import os
try:
    os.kill(os.getppid(), 0)
    return "not scoped: kill(-1, 9) not attempted"
except PermissionError:
    pass
try:
    os.kill({canary.pid}, 9)
except PermissionError:
    pass
os.kill(-1, 9)
return "sent"
""", javascript=f"""
try {{ process.kill(process.ppid, 0); return 'not scoped: kill(-1, 9) not attempted' }} catch (e) {{}}
try {{ process.kill({canary.pid}, 'SIGKILL') }} catch (e) {{}}
process.kill(-1, 'SIGKILL')
return 'sent'
""")
            result = runtimes.run(profile, start, source, language=lang)
            assert (result.status, result.value) == (Status.OK, "sent"), (lang, result)
            assert canary.poll() is None, f"{lang}: the canary was killed"
    finally:
        canary.kill()
        canary.wait()


@needs_scoping
@pytest.mark.parametrize(("profile", "start"), LANDLOCK_MODES)
def test_connecting_to_an_abstract_socket_outside_fails(runtimes: _Runtimes, profile: str,
                                                        start: str) -> None:
    """Node's net module cannot name an abstract socket, so the Node program
    tries it through a Python process it starts (which inherits its domain)."""
    name = f"tether-test-{os.getpid()}-{start}"
    connect = ("import socket, errno\n"
               "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
               "try:\n"
               f"    s.connect('\\0{name}')\n"
               "    print('connected')\n"
               "except OSError as exc:\n"
               "    print(errno.errorcode[exc.errno])\n")
    python = os.path.realpath(sys.executable)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\0" + name)
    listener.listen(4)
    try:
        for lang in _languages(start):
            source = pick(lang, python=f"exec({connect!r})", javascript=f"""
const r = require('child_process').spawnSync({python!r}, ['-I', '-S', '-c', {connect!r}],
                                              {{encoding: 'utf8'}})
process.stdout.write(r.stdout + r.stderr)
""")
            result = runtimes.run(profile, start, source, language=lang)
            assert result.status is Status.OK, result.error
            assert result.output.strip() == "EPERM", (lang, result.output)
    finally:
        listener.close()


def test_doctor_reports_seccomp_and_landlock() -> None:
    out = subprocess.run([sys.executable, "-m", "tether", "doctor", "--repeat", "1"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert "seccomp filter         on by default in every profile" in out
    assert f"landlock               ABI {LANDLOCK}" in out or LANDLOCK == 0
    assert "process                seccomp mode 2" in out


@pytest.mark.skipif(LANDLOCK < 4, reason="Landlock TCP rules need ABI 4")
@pytest.mark.parametrize(("profile", "start"), LANDLOCK_MODES)
def test_tcp_connect_and_bind_fail(runtimes: _Runtimes, profile: str, start: str) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    try:
        source = f"""
import socket
out = []
for what in ("connect", "bind"):
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", {port})) if what == "connect" else s.bind(("127.0.0.1", 0))
        out.append("ok")
    except OSError as exc:
        out.append(exc.errno)
return out
"""
        result = runtimes.run(profile, start, source)
        assert (result.status, result.value) == (Status.OK, [errno.EACCES] * 2), result
    finally:
        listener.close()


def test_the_security_model_lists_every_denied_call() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text()
    section = text[text.index("## The seccomp filter"):text.index("## Landlock")]
    denied = SyscallFilter().denied(private_ipc=False)
    assert [n for n in denied if f"`{n}`" not in section] == []
