"""Runs are independent (R-RUN-5): nothing one program writes is seen by
another run, in sequence or at the same time, in every start mode; what
a run can write is bounded (``Limits.disk_bytes``); a run's limits are its
own, whatever runs its pool served before; and no IPC object of a run
reaches a later run or outlives the Runtime.

Under ``namespaces`` the first program looks for every place in its view of
the filesystem where it can create a file and leaves one there; the second
looks for each. Under ``process`` (not a boundary: the program writes to the
host's disk) only the work directory is private, and that is what is checked.
"""

from __future__ import annotations

import asyncio
import ctypes
import errno
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tether import Limits, PoolConfig, RunResult, Runtime, Status
from tether.host.sandbox import cgroups
from tether.host.sandbox.profiles import detect

from .conftest import pick, quick, until_ready

START_MODES = {
    "forked": PoolConfig(size=1),
    "spawned": PoolConfig(size=1, fork_server=False),
    "cold": None,
}
PROFILES = ["namespaces", "process"]

#: Leaves a file in every directory it can write to (under namespaces, in
#: the whole view; under process, its own work directory), tells the host
#: where, and waits until the host says the other run has looked.
WRITE = {
    "python": """
import os
everywhere = {everywhere}
candidates = [os.getcwd()]
if everywhere:
    for root, dirs, _ in os.walk("/"):
        dirs[:] = [d for d in dirs if root.count("/") < 3
                   and os.path.join(root, d) not in ("/proc", "/sys", "/usr")]
        candidates.append(root)
written = []
for directory in dict.fromkeys(candidates):
    path = os.path.join(directory, "{marker}")
    try:
        with open(path, "w") as f:
            f.write("left by another run")
        written.append(path)
    except OSError:
        pass
await wrote(written)
return written
""",
    "javascript": """
const fs = require('fs'), path = require('path')
const candidates = [process.cwd()]
const walk = (dir, depth) => {
  candidates.push(dir)
  if (depth >= 3) return
  let entries = []
  try { entries = fs.readdirSync(dir, { withFileTypes: true }) } catch { return }
  for (const e of entries) {
    const full = path.join(dir, e.name)
    if (e.isDirectory() && !['/proc', '/sys', '/usr'].includes(full)) walk(full, depth + 1)
  }
}
if ({everywhere}) walk('/', 0)
const written = []
for (const dir of new Set(candidates)) {
  const file = path.join(dir, '{marker}')
  try { fs.writeFileSync(file, 'left by another run'); written.push(file) } catch {}
}
await wrote(written)
return written
""",
}

#: Looks for the files the other run left, and lists its own work directory.
LOOK = {
    "python": """
import os
return [[p for p in await written() if os.path.exists(p)], os.listdir(".")]
""",
    "javascript": """
const fs = require('fs')
return [(await written()).filter((p) => fs.existsSync(p)), fs.readdirSync('.')]
""",
}


def _runtime(profile: str, mode: str) -> Runtime:
    return Runtime(sandbox=profile, pool=START_MODES[mode])


def _skip_unless_available(profile: str) -> None:
    if profile == "namespaces" and not detect().namespaces:
        pytest.skip(detect().detail)


async def _writer_and_looker(rt: Runtime, lang: str, marker: str,
                             *, together: bool) -> tuple[RunResult, RunResult]:
    paths: asyncio.Future[list[str]] = asyncio.get_running_loop().create_future()
    looked = asyncio.Event()

    async def wrote(found: list[str]) -> None:
        paths.set_result(found)
        if together:
            await looked.wait()  # the files stay while the other run looks

    async def written() -> list[str]:
        found = await paths
        return found

    everywhere = "True" if rt.sandbox == "namespaces" else "False"
    if lang == "javascript":
        everywhere = everywhere.lower()
    write = WRITE[lang].replace("{marker}", marker).replace("{everywhere}", everywhere)
    limits = quick(timeout=30)

    async def look() -> RunResult:
        try:
            return await rt.run(LOOK[lang], language=lang, bindings=[written], limits=limits)
        finally:
            looked.set()

    if together:
        first, second = await asyncio.gather(
            rt.run(write, language=lang, bindings=[wrote], limits=limits), look())
    else:
        first = await rt.run(write, language=lang, bindings=[wrote], limits=limits)
        if rt.sandbox == "process":  # its work directory goes with its teardown, after run()
            await rt._teardowns.all_done()
        second = await look()
    return first, second


@pytest.mark.parametrize("together", [False, True], ids=["in-sequence", "side-by-side"])
@pytest.mark.parametrize("mode", list(START_MODES))
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.filterwarnings("ignore:tether. sandbox='process'")
def test_nothing_a_run_writes_reaches_another_run(lang: str, profile: str, mode: str,
                                                  together: bool) -> None:
    _skip_unless_available(profile)
    marker = f"tether-isolation-{os.getpid()}-{profile}-{mode}-{together}"

    async def go() -> tuple[RunResult, RunResult]:
        async with _runtime(profile, mode) as rt:
            return await _writer_and_looker(rt, lang, marker, together=together)

    first, second = asyncio.run(go())
    assert first.status is Status.OK, first.error
    assert second.status is Status.OK, second.error
    written: list[str] = first.value
    seen, listing = second.value
    assert written, "the program could write nowhere, not even its work directory"
    assert listing == []  # a work directory of its own
    if profile == "namespaces" or not together:
        # Under process a run going on beside it can read its files by their
        # host path (the profile is not a boundary); once its teardown is
        # over they are gone.
        assert seen == []
    if profile == "namespaces":
        # Only the run's own tmpfs mounts are writable: the work directory,
        # /tmp and /dev/shm (with the folders bwrap made on them for its
        # mounts, when the work directory or the code lie under /tmp).
        cwd = Path(written[0]).parent
        for place in (Path(p).parent for p in written):
            assert any(place.is_relative_to(root)
                       for root in (cwd, Path("/tmp"), Path("/dev/shm"))), place
    for path in written:  # nothing of it reached the host
        if profile == "namespaces":
            assert not os.path.exists(path)


FILL = {
    "python": """
import os
totals = {{}}
for directory in (os.getcwd(), "/tmp", "/dev/shm"):
    total, chunk = 0, b"x" * (4 << 20)
    try:
        with open(os.path.join(directory, "fill"), "wb") as f:
            for _ in range({chunks}):
                f.write(chunk)
                f.flush()
                total += len(chunk)
        problem = None
    except OSError as e:
        problem = e.errno
    totals[directory] = [total, problem]
    try:
        os.unlink(os.path.join(directory, "fill"))
    except OSError:
        pass
return list(totals.values())
""",
    "javascript": """
const fs = require('fs'), path = require('path')
const out = []
for (const dir of [process.cwd(), '/tmp', '/dev/shm']) {{
  const file = path.join(dir, 'fill'), chunk = Buffer.alloc(4 << 20, 120)
  let total = 0, problem = null
  try {{
    const fd = fs.openSync(file, 'w')
    try {{ for (let i = 0; i < {chunks}; i++) {{ fs.writeSync(fd, chunk); total += chunk.length }} }}
    finally {{ fs.closeSync(fd) }}
  }} catch (e) {{ problem = e.code }}
  try {{ fs.unlinkSync(file) }} catch {{}}
  out.push([total, problem])
}}
return out
""",
}


@pytest.mark.parametrize("mode", list(START_MODES))
def test_disk_use_is_bounded_in_every_start_mode(lang: str, mode: str) -> None:
    _skip_unless_available("namespaces")
    disk = 24 << 20
    source = FILL[lang].format(chunks=16)  # 64 MiB a place, more than the bound
    limits = quick(disk_bytes=disk, file_bytes=None, timeout=30)

    async def go() -> RunResult:
        async with _runtime("namespaces", mode) as rt:
            return await rt.run(source, language=lang, limits=limits)

    result = asyncio.run(go())
    assert result.status is Status.OK, result.error
    for total, problem in result.value:
        assert total <= disk
        assert problem in (28, "ENOSPC")


def test_disk_bytes_must_be_positive() -> None:
    with pytest.raises(ValueError, match="disk_bytes"):
        Limits(disk_bytes=0)


def _fill_once(lang: str) -> Any:
    return pick(lang, python="open('f', 'wb').write(b'x' * (8 << 20))\nreturn 1",
                javascript="require('fs').writeFileSync('f', Buffer.alloc(8 << 20))\nreturn 1")


def test_runs_with_other_disk_bounds_get_guests_of_their_own(lang: str) -> None:
    """The bound is fixed when a guest's mounts are made, so a pool never
    hands a guest made for one bound to a run with another."""
    _skip_unless_available("namespaces")

    async def go() -> list[RunResult]:
        async with Runtime(sandbox="namespaces", pool=PoolConfig(size=1)) as rt:
            small = await rt.run(_fill_once(lang), language=lang,
                                 limits=quick(disk_bytes=4 << 20))
            large = await rt.run(_fill_once(lang), language=lang,
                                 limits=quick(disk_bytes=16 << 20))
            return [small, large]

    small, large = asyncio.run(go())
    assert small.status is Status.ERROR  # ENOSPC
    assert (large.status, large.value) == (Status.OK, 1)


# -- limits: each run's own ---------------------------------------------------------

#: Allocates 400 MiB, a MiB at a time, and touches every page of it.
ALLOCATE = ("x = [bytearray(1 << 20) for _ in range(400)]\n"
            "return sum(len(chunk) for chunk in x)")
POOLED = ["forked", "spawned"]


@pytest.mark.parametrize("mode", POOLED)
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.filterwarnings("ignore:tether. sandbox='process'")
def test_a_runs_memory_ceiling_is_its_own_not_an_earlier_runs(profile: str, mode: str) -> None:
    """A pool made by a run with 256 MiB hands its guests to later runs: one
    with the default limit and one with none each allocate 400 MiB; one
    with 256 MiB again is stopped. (cgroup v1 refused a ceiling raised above
    memory+swap's, and a run without one kept the pool's.)"""
    _skip_unless_available(profile)

    async def go() -> list[RunResult]:
        async with _runtime(profile, mode) as rt:
            results = [await rt.run("return 1", limits=quick(memory_bytes=256 << 20))]
            for memory in (Limits().memory_bytes, None, 256 << 20):
                await until_ready(rt, 1)  # a guest of the pool the first run made
                results.append(await rt.run(ALLOCATE, limits=quick(memory_bytes=memory)))
            return results

    first, default, unlimited, small = asyncio.run(go())
    assert first.status is Status.OK, first.error
    assert (default.status, default.value) == (Status.OK, 400 << 20), default.error
    assert (unlimited.status, unlimited.value) == (Status.OK, 400 << 20), unlimited.error
    assert (small.status, small.limit) == (Status.LIMIT, "memory_bytes"), small.error


#: A memory ceiling the test's kernel "refuses" (see below).
REFUSED = (300 << 20) + (5 << 12)


@pytest.mark.skipif(cgroups.available().version is None, reason=cgroups.available().detail)
@pytest.mark.parametrize("mode", list(START_MODES))
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.filterwarnings("ignore:tether. sandbox='process'")
def test_a_ceiling_the_kernel_refuses_fails_the_start(monkeypatch: pytest.MonkeyPatch,
                                                      profile: str, mode: str) -> None:
    """The guest is real; only the write of REFUSED fails, as the kernel
    fails one: the run gets a result saying so, and its program never ran."""
    _skip_unless_available(profile)
    write = cgroups._write

    def refusing(path: Path, text: str) -> None:
        if text == str(REFUSED):
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        write(path, text)

    monkeypatch.setattr(cgroups, "_write", refusing)

    async def go() -> list[RunResult]:
        async with _runtime(profile, mode) as rt:
            refused = await rt.run("print('ran')\nreturn 1", limits=quick(memory_bytes=REFUSED))
            return [refused, await rt.run("return 2", limits=quick())]

    refused, after = asyncio.run(go())
    assert refused.status is Status.CRASHED, refused
    assert refused.error is not None and refused.error.type == "GuestCrashed"
    assert "could not be started" in refused.error.message
    assert f"= {REFUSED}: Invalid argument" in refused.error.message, refused.error.message
    assert refused.output == ""
    assert (after.status, after.value) == (Status.OK, 2), after.error


# -- System V IPC -------------------------------------------------------------------

#: Makes a System V shared memory segment (holding a secret), message queue
#: (holding it too) and semaphore set, and a POSIX message queue; returns
#: for each its id, or minus the errno that refused it.
IPC_MAKE = """
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
made = {}
shm = libc.shmget(KEY, 1 << 20, 0o1666)
if shm >= 0:
    address = libc.shmat(shm, None, 0)
    ctypes.memmove(address, SECRET, len(SECRET))
    libc.shmdt(ctypes.c_void_p(address))
msg = libc.msgget(KEY, 0o1666)
if msg >= 0:
    message = struct.pack("l", 1) + SECRET
    libc.msgsnd(msg, message, len(SECRET), 0)
sem = libc.semget(KEY, 1, 0o1666)
mq = libc.mq_open(NAME, os.O_CREAT | os.O_RDWR, 0o666, None)
for kind, made_id in (("shm", shm), ("msg", msg), ("sem", sem), ("mq", mq)):
    made[kind] = made_id if made_id >= 0 else -ctypes.get_errno()
return made
"""
#: Looks for them, and reads the secret where it can.
IPC_LOOK = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
found = {}
shm = libc.shmget(KEY, 0, 0)
found["shm"] = ctypes.string_at(libc.shmat(shm, None, 0), len(SECRET)).decode() \\
    if shm >= 0 else -ctypes.get_errno()
for kind, found_id in (("msg", libc.msgget(KEY, 0)), ("sem", libc.semget(KEY, 0, 0)),
                       ("mq", libc.mq_open(NAME, os.O_RDONLY))):
    found[kind] = found_id if found_id >= 0 else -ctypes.get_errno()
return found
"""


def _ipc_left(key: int, name: bytes) -> list[str]:
    """What of the runs' IPC objects is on the host (the test's own IPC
    namespace); removed on the way, so that a failure leaves nothing."""
    left = []
    for kind, remove in (("shm", "-M"), ("msg", "-Q"), ("sem", "-S")):
        keys = [int(line.split()[0]) for line in
                Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]]
        if key in keys:
            left.append(kind)
            subprocess.run(["ipcrm", remove, str(key)], check=False)
    libc = ctypes.CDLL(None, use_errno=True)
    queue = libc.mq_open(name, os.O_RDONLY)
    if queue >= 0:
        left.append("mq")
        os.close(queue)
        libc.mq_unlink(name)
    return left


@pytest.mark.parametrize("mode", list(START_MODES))
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.filterwarnings("ignore:tether. sandbox='process'")
def test_no_ipc_object_reaches_a_later_run_or_outlives_the_runtime(profile: str,
                                                                   mode: str) -> None:
    """Under namespaces a run's IPC objects are its IPC namespace's (a program
    may use them); under process, which has none of its own, the filter
    refuses the calls (EPERM). Either way the next run finds nothing, and
    nothing is left on the host."""
    _skip_unless_available(profile)
    key = 0x7E000000 + os.getpid() % 0x10000 * 16 + list(START_MODES).index(mode) \
        + 8 * PROFILES.index(profile)
    name = f"/tether-isolation-{key}".encode()
    header = f"KEY = {key}\nNAME = {name!r}\nSECRET = b'secret of the first run'\n"

    async def go() -> list[RunResult]:
        async with _runtime(profile, mode) as rt:
            return [await rt.run(header + IPC_MAKE, limits=quick()),
                    await rt.run(header + IPC_LOOK, limits=quick())]

    try:
        made, looked = asyncio.run(go())
    finally:
        left = _ipc_left(key, name)
    assert made.status is Status.OK, made.error
    assert looked.status is Status.OK, looked.error
    if profile == "namespaces":
        assert all(made_id >= 0 for made_id in made.value.values()), made.value
        assert looked.value == dict.fromkeys(("shm", "msg", "sem", "mq"), -errno.ENOENT)
    else:
        assert made.value == dict.fromkeys(("shm", "msg", "sem", "mq"), -errno.EPERM)
        assert looked.value == dict.fromkeys(("shm", "msg", "sem", "mq"), -errno.EPERM)
    assert left == []
