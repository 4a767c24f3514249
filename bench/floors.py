"""What this machine charges for the pieces of a fresh guest, whoever runs it.

Each floor is measured back to back, N times, and reported per operation as
wall time and as the whole machine's CPU time (from /proc/stat, so the
kernel's deferred work counts: a network namespace is torn down by a kernel
worker after its last process exits). Run it on an otherwise idle machine:

    .venv/bin/python bench/floors.py [--count 200]

- ``fork``: fork() of a process holding as much memory as the fork server's
  template, the child exiting at once, reaped.
- ``fork, child writes 2 MiB``: the same, the child first writing 2 MiB of
  memory it did not have: the least a fresh guest pays to hold a 1 MB string
  it received (the frame it arrived in, and the string), which a reused worker
  has paid once, long ago. The difference from ``fork`` is that cost.
- ``paused hello``: what W1 with 150 ms between runs costs at least, in a
  fresh CPython process each time against one reused worker (Monty's pool):
  a process forked from one that has compiled and run the program once (as
  a template would) runs it once itself (as a pooled guest rehearses) and
  waits on a socket; the parent sends it 300 bytes, the child compiles and
  runs ``print("hi")`` / ``return 42`` (as a function body) and sends 20
  bytes back; timed from the send to the reply, the parent blocking (no
  event loop). No codec, no confinement, no output capture.
- ``paused hello through the codec``: the same fresh process, now speaking
  tether's protocol as a guest must (spec §4-§7): the parent sends a RUN
  frame and decodes the OUTPUT and DONE frames it gets back strictly
  (tether.codec), the child decodes the RUN strictly, compiles the program
  as the Python guest does (``compile_program``: top-level ``return``) and
  runs it, its print captured. No event loop, limits, cgroups or shim: what
  any CPython guest and host of this protocol pay after a pause. ``, asyncio
  host``: the same, the host on an asyncio loop (woken by the loop when the
  socket is readable, its coroutine by a future), as tether's host is; the
  two hosts take turns, run by run.
- ``RUN decoded back to back`` and ``N ms after the last``: one strict
  decode of the W1 RUN (``decode_payload`` and ``Run.from_wire``) in this
  process, right after the previous one or N ms after it, the process
  sleeping or spinning on the clock meanwhile: what the same code costs
  once it has gone untouched for a while, whether the CPU was idle or kept
  busy spinning.
- ``fork, child waits``: ``fork``, the child exiting once the parent has
  written a byte to a pipe; ``fork into a run's cgroups``: the same, the
  child put in a run's cgroups first (host/sandbox/cgroups.py: created, given the
  default limits, joined; its peak read and the groups removed once it has
  exited), as every run is where cgroups are writable. The difference is
  what the kernel charges for a run's cgroups.
- ``join a run's cgroups``: how long moving a waiting process into a new
  run's cgroups takes (host/sandbox/cgroups.py ``RunCgroup.add``), back to back (a
  few milliseconds apart: a fork, an exit and a removal come between two
  moves) and 150 ms after the last move (medians and upper quartiles). A
  move takes a lock that, unless a move took it moments before, first waits
  for an RCU grace period (not under cgroup2's ``favordynmods``): what a run
  that waits for a new guest after a quiet spell waits for, beside the fork
  (a pooled guest moves while it waits).
- ``clone namespaces``: the same with the namespaces every forked run gets
  (user, PID, mount, network, IPC, UTS).
- ``clone namespaces, no network``: without the network namespace.
- ``clone namespaces, two at once``: ``clone namespaces`` in two processes
  at the same time (a 2-core machine's most): what a burst of forked runs
  could reach if the kernel were all they cost (tether's W6 against it).
- ``clone namespaces, the parent's part``: the time the clone() call takes
  in the process that makes it (its children exit at once and are reaped
  after the timing), with every namespace of a run, and with only the user
  and PID namespaces (the template's part since the init makes the others
  itself): what a single-threaded template spends per forked run.
- ``network namespace made`` and ``… torn down``: a user namespace with a
  network namespace, without one, made by N children that then wait (the
  wall time and CPU of making them), and then their exit: the CPU the
  machine spends in the 2 s after the last is reaped, per namespace (a
  network namespace is torn down by a kernel worker, after its last
  process, one batch at a time).
- ``node -e 0``: a Node.js process that runs nothing (the floor of a fresh
  JavaScript guest), in a guest's environment.
- ``python -I -S -c pass``: a CPython process that runs nothing, likewise.
- ``Node guest to HELLO``: the Node guest started from main.mjs, and from
  its startup snapshot (host/guests/node_snapshot.py), over stdio with no host: it
  says HELLO, then stops, as its input (/dev/null) is no stream it can read
  (what a guest costs before its run, against ``node -e 0``); and 20 of
  them from the snapshot started at once, all waited for (the floor of a
  JavaScript W6 whose guests all start at the burst: 20 / that time).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

from tether.codec import Binding, Run
from tether.host.guests import node_snapshot
from tether.host.guests.languages import node_flags
from tether.host.limits import Limits
from tether.host.sandbox import cgroups
from tether.host.sandbox.paths import GUEST_DIR
from tether.host.sandbox.seccomp import CLONE_NAMESPACES

#: The namespaces a forked run gets (guest/python/zygote.py).
RUN_NAMESPACES = sum(CLONE_NAMESPACES[name] for name in (
    "CLONE_NEWUSER", "CLONE_NEWPID", "CLONE_NEWNS", "CLONE_NEWNET", "CLONE_NEWIPC",
    "CLONE_NEWUTS"))
CLONE_NEWNET = CLONE_NAMESPACES["CLONE_NEWNET"]
SYS_CLONE = 56  # x86-64
SIGCHLD = 17
#: A guest's environment: nothing of this shell's (NODE_EXTRA_CA_CERTS, say,
#: makes every Node process read certificates at start).
GUEST_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
#: Guests started at once in a burst (the peers harness's W6).
BURST = 20
#: About the resident size of the fork server's template.
TEMPLATE_BYTES = 22 * 1024 * 1024

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def machine_cpu() -> float:
    """Seconds of CPU the whole machine has spent (every core, not idle)."""
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def clone_and_reap(flags: int) -> None:
    pid = int(_libc.syscall(SYS_CLONE, flags | SIGCHLD, 0, 0, 0, 0))
    if pid == 0:
        os._exit(0)
    if pid < 0:
        raise OSError(ctypes.get_errno(), "clone")
    os.waitpid(pid, 0)


def kernel_workers_cpu() -> float:
    """Seconds of CPU the kernel's worker threads (kworker) have spent, those
    alive now: where a network namespace's teardown runs, apart from the
    processes of others sharing the machine."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        comm, fields = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:]
        if comm.startswith("kworker"):
            values = fields.split()
            total += int(values[11]) + int(values[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def clone_parent_part(flags: int, count: int, name: str) -> None:
    spent = 0.0
    children = []
    for _ in range(count):
        start = time.perf_counter()
        pid = int(_libc.syscall(SYS_CLONE, flags | SIGCHLD, 0, 0, 0, 0))
        if pid == 0:
            os._exit(0)
        spent += time.perf_counter() - start
        if pid < 0:
            raise OSError(ctypes.get_errno(), "clone")
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    print(f"| clone namespaces, the parent's part: {name} | {spent / count * 1e3:.2f} ms | "
          f"| {count / spent:.0f}/s |")


def clone_in_two(flags: int, count: int) -> None:
    """``clone_and_reap(flags)`` ``count`` times in each of two processes at
    once: the rate of both together."""
    machine, start = machine_cpu(), time.perf_counter()
    workers = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            try:
                for _ in range(count):
                    clone_and_reap(flags)
            finally:
                os._exit(0)
        workers.append(pid)
    for pid in workers:
        os.waitpid(pid, 0)
    wall = time.perf_counter() - start
    time.sleep(0.5)
    cpu = machine_cpu() - machine
    print(f"| clone namespaces, two at once | {wall / count / 2 * 1e3:.2f} ms | "
          f"{cpu / count / 2 * 1e3:.2f} ms | {2 * count / wall:.0f}/s |")


def namespaces_held(flags: int, count: int, name: str) -> None:
    """``count`` children cloned into new namespaces (``flags``), each waiting:
    the making timed; then all let go at once and reaped, and the machine's
    CPU in the next 2 s counted (the teardown a kernel worker does after)."""
    read, write = os.pipe()
    children = []
    own = os.times()
    start = time.perf_counter()
    for _ in range(count):
        pid = int(_libc.syscall(SYS_CLONE, flags | SIGCHLD, 0, 0, 0, 0))
        if pid == 0:
            os.read(read, 1)
            os._exit(0)
        if pid < 0:
            raise OSError(ctypes.get_errno(), "clone")
        children.append(pid)
    made = time.perf_counter() - start
    after = os.times()
    made_cpu = after.user + after.system - own.user - own.system  # children not yet reaped
    time.sleep(0.5)
    workers, start = kernel_workers_cpu(), time.perf_counter()
    os.write(write, b"x" * count)
    for pid in children:
        os.waitpid(pid, 0)
    reaped = time.perf_counter() - start
    time.sleep(2.0)
    torn = kernel_workers_cpu() - workers
    os.close(read)
    os.close(write)
    print(f"| {name} made, {count} held | {made / count * 1e3:.2f} ms | "
          f"{made_cpu / count * 1e3:.2f} ms | {count / made:.0f}/s |")
    print(f"| {name} let go and torn down (wall: to the last reaped) | "
          f"{reaped / count * 1e3:.2f} ms | {torn / count * 1e3:.2f} ms | |")


def fork_and_write(size: int) -> None:
    pid = os.fork()
    if pid == 0:
        bytearray(size)  # zero-filled: every page written
        os._exit(0)
    os.waitpid(pid, 0)


@contextlib.contextmanager
def waiting_child() -> Iterator[int]:
    """A forked child that waits, its pid; it exits, reaped, as the block ends."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.read(read, 1)
        os._exit(0)
    try:
        yield pid
    finally:
        os.write(write, b"x")
        os.waitpid(pid, 0)
        os.close(read)
        os.close(write)


def fork_and_wait(into_cgroups: bool) -> None:
    group = None
    try:
        with waiting_child() as pid:
            if into_cgroups:
                group = cgroups.RunCgroup(cgroups.group_name(pid))
                limits = Limits()
                group.set_limits(memory_bytes=limits.memory_bytes, processes=limits.processes)
                group.add(pid)
        if group is not None:
            group.peak_memory()
    finally:
        if group is not None:
            group.remove()


W1_SOURCE = 'def program():\n    print("hi")\n    return 42\n'


def w1_run() -> Run:
    """The RUN of W1 (a hello with one binding), as the codec floors send it."""
    return Run(source='print("hi")\nreturn 42', language="python",
               bindings=(Binding("add", signature="(a, b)", doc="Add two numbers."),),
               limits=Limits().wire())


def paused_hello(count: int) -> None:
    """The ``paused hello`` floors: medians of ``count`` sends, 150 ms apart,
    to a fresh process each time and to one reused worker, taking turns."""
    import io
    import socket
    import statistics

    def run_once() -> None:
        namespace: dict[str, object] = {"print": lambda *a: io.StringIO().write(" ".join(a))}
        exec(compile(W1_SOURCE, "<program>", "exec"), namespace)
        namespace["program"]()  # type: ignore[operator]

    def serve(sock: socket.socket, runs: int) -> None:
        run_once()  # rehearsed, as a pooled guest is: its pages are its own
        for _ in range(runs):
            sock.recv(4096)
            run_once()
            sock.send(b"x" * 20)
        sock.recv(1)  # exits once the timing is over: no exit runs beside it
        os._exit(0)

    def forked(runs: int) -> tuple[socket.socket, int]:
        parent, child = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            parent.close()
            serve(child, runs)
        child.close()
        return parent, pid

    def one(sock: socket.socket) -> float:
        time.sleep(0.15)
        start = time.perf_counter()
        sock.send(b"r" * 300)
        sock.recv(4096)
        return time.perf_counter() - start

    run_once()  # the template has run the path once
    # All forked first: this process then pays no copy-on-write faults of
    # its own while it times (tether's host forks nothing; its template does).
    worker, worker_pid = forked(count)
    waiting = [forked(1) for _ in range(count)]
    time.sleep(0.5)
    fresh, reused = [], []
    for sock, _ in waiting:
        fresh.append(one(sock))
        reused.append(one(worker))
    for sock, pid in [*waiting, (worker, worker_pid)]:
        sock.send(b"q")  # not a close: later children hold copies of this end
        sock.close()
        os.waitpid(pid, 0)
    for name, times in (("a fresh process each time", fresh), ("one reused worker", reused)):
        print(f"| paused hello, {name} (send to reply, median of {count}) | "
              f"{statistics.median(times) * 1e3:.2f} ms | | |")


def cgroup_joins(count: int) -> None:
    """The ``join a run's cgroups`` floors (wall time of the move alone)."""
    import statistics

    for label, gap in (("back to back", 0.0), ("150 ms after the last", 0.15)):
        times = []
        for _ in range(count):
            group = None
            try:
                with waiting_child() as pid:
                    group = cgroups.RunCgroup(cgroups.group_name(pid))
                    time.sleep(gap)
                    start = time.perf_counter()
                    group.add(pid)
                    times.append(time.perf_counter() - start)
            finally:
                if group is not None:
                    group.remove()
        times.sort()
        upper = times[len(times) * 3 // 4]
        print(f"| join a run's cgroups, {label} (median; upper quartile {upper * 1e3:.2f} ms) "
              f"| {statistics.median(times) * 1e3:.2f} ms | | |")


def paused_codec_hello(count: int) -> None:
    """The ``paused hello through the codec`` floors: medians of ``count``
    runs, 150 ms apart, each in a fresh process, the host blocking on its
    socket and on an asyncio loop, taking turns."""
    import asyncio
    import socket
    import statistics

    from tether.codec import NEED_DATA, Connection, Done, Hello, Output, Role
    from tether.codec import Stream as OutputStream
    from tether.guest.python.program import ProgramReturn, compile_program, program_globals

    run = w1_run()
    hello = Hello(implementation="floor", languages=("python",))

    def pair() -> tuple[Connection, Connection]:
        host, guest = Connection(Role.HOST), Connection(Role.GUEST)
        host.receive_data(guest.send(hello))
        host.next_event()
        return host, guest

    def receive(sock: socket.socket, conn: Connection) -> object:
        """The next message, reading as needed."""
        while (event := conn.next_event()) is NEED_DATA:
            data = sock.recv(65536)
            if not data:
                raise EOFError("the other end closed the channel")
            conn.receive_data(data)
        return event

    def guest_run(sock: socket.socket, guest: Connection) -> None:
        message = receive(sock, guest)
        assert isinstance(message, Run)
        printed: list[str] = []
        namespace = program_globals({}, {"print": lambda *a: printed.append(" ".join(a) + "\n")})
        value = None
        try:
            exec(compile_program(message.source), namespace)
        except ProgramReturn as returned:
            value = returned.value
        sock.sendall(guest.send(Output(OutputStream.STDOUT, "".join(printed))))
        sock.sendall(guest.send(Done(value=value)))

    def until_done(sock: socket.socket, host: Connection) -> None:
        while not isinstance(receive(sock, host), Done):
            pass

    async def until_done_on_loop(sock: socket.socket, host: Connection) -> None:
        """until_done as an asyncio host does it, on a socket that does not
        block: woken by the loop when it is readable, the run's coroutine by
        a future."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def readable() -> None:
            try:
                while not done.done():
                    try:
                        data = sock.recv(65536)
                    except BlockingIOError:
                        return
                    if not data:
                        raise EOFError("the other end closed the channel")
                    host.receive_data(data)
                    while (event := host.next_event()) is not NEED_DATA:
                        if isinstance(event, Done):
                            done.set_result(None)
            except BaseException as exc:  # the floor fails, not the loop's handler
                done.set_exception(exc)
            finally:
                if done.done():
                    loop.remove_reader(sock.fileno())

        loop.add_reader(sock.fileno(), readable)
        await done

    def rehearse() -> None:
        (host, guest), (a, b) = pair(), socket.socketpair()
        with a, b:
            a.sendall(host.send(run))
            guest_run(b, guest)
            until_done(a, host)

    def fresh_guests(number: int) -> list[tuple[socket.socket, int]]:
        children: list[tuple[socket.socket, int]] = []
        for _ in range(number):
            parent_end, child_end = socket.socketpair()
            pid = os.fork()
            if pid == 0:
                try:
                    for sock, _ in children:
                        sock.close()
                    parent_end.close()
                    rehearse()  # as a pooled guest does
                    guest_run(child_end, pair()[1])
                    child_end.recv(1)
                finally:
                    os._exit(0)  # never through this process's exit (its buffered output)
            child_end.close()
            children.append((parent_end, pid))
        return children

    def let_go(children: list[tuple[socket.socket, int]]) -> None:
        for sock, pid in children:
            sock.setblocking(True)
            sock.send(b"q")
            sock.close()
            os.waitpid(pid, 0)

    async def timed() -> tuple[list[float], list[float]]:
        """Both hosts, taking turns run by run, each with fresh guests."""
        children = fresh_guests(2 * count)
        await asyncio.sleep(0.5)
        # Each host has taken its part before, as a long-lived one has.
        rehearse()
        (host, guest), (a, b) = pair(), socket.socketpair()
        with a, b:
            a.setblocking(False)
            a.sendall(host.send(run))
            guest_run(b, guest)
            await until_done_on_loop(a, host)
        blocking: list[float] = []
        on_a_loop: list[float] = []
        for index, (sock, _) in enumerate(children):
            on_loop = index % 2 == 1
            sock.setblocking(not on_loop)
            host = pair()[0]
            await asyncio.sleep(0.15)
            start = time.perf_counter()
            sock.sendall(host.send(run))
            if on_loop:
                await until_done_on_loop(sock, host)
            else:
                until_done(sock, host)
            (on_a_loop if on_loop else blocking).append(time.perf_counter() - start)
        let_go(children)
        return blocking, on_a_loop

    rehearse()  # the template has taken the path once
    for label, times in zip(("", ", asyncio host"), asyncio.run(timed()), strict=True):
        print(f"| paused hello through the codec{label}, a fresh process each time "
              f"(median of {count}) | {statistics.median(times) * 1e3:.2f} ms | | |")


def untouched_decode(count: int) -> None:
    """The ``RUN decoded N ms after the last`` floors: medians of ``count`` strict
    decodes of a W1 RUN in this process, each after it slept, or spun on the
    clock, for N ms."""
    import statistics

    from tether.codec import decode_payload, encode_payload

    payload = encode_payload(w1_run().to_wire())

    def decode() -> float:
        start = time.perf_counter()
        Run.from_wire(decode_payload(payload))
        return time.perf_counter() - start

    def spin(seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    for _ in range(10):
        decode()
    times = [decode() for _ in range(count)]
    print(f"| RUN decoded back to back (median of {count}) | "
          f"{statistics.median(times) * 1e6:.0f} µs | | |")
    for pause in (0.002, 0.02, 0.15):
        cells = []
        for wait in (time.sleep, spin):
            times = []
            for _ in range(count):
                wait(pause)
                times.append(decode())
            cells.append(f"{statistics.median(times) * 1e6:.0f} µs")
        print(f"| RUN decoded {pause * 1e3:g} ms after the last (median of {count}; "
              f"slept, spun) | {cells[0]}, {cells[1]} | | |")


#: Substrings of the floors to measure (--only); empty: all of them.
ONLY: list[str] = []


def wanted(name: str) -> bool:
    return not ONLY or any(part in name for part in ONLY)


def measure(name: str, operation: Callable[[], object], count: int) -> None:
    if not wanted(name):
        return
    operation()  # once, untimed
    cpu, wall = machine_cpu(), time.perf_counter()
    for _ in range(count):
        operation()
    wall = time.perf_counter() - wall
    time.sleep(0.5)  # let deferred kernel work (namespace teardown) finish and count
    cpu = machine_cpu() - cpu
    print(f"| {name} | {wall / count * 1e3:.2f} ms | {cpu / count * 1e3:.2f} ms "
          f"| {count / wall:.0f}/s |")


def node_guests(node: str, count: int) -> None:
    flags = node_flags(Limits())
    blob = node_snapshot.blob_path(node, flags)
    if blob is not None and not blob.is_file():
        node_snapshot.build(node, flags)
    entry = str(GUEST_DIR / "node" / "main.mjs")
    env = {**GUEST_ENV, "TETHER_TRANSPORT": "stdio"}

    def start(*argv: str) -> None:
        subprocess.run([node, *flags, *argv], env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)

    def burst(*argv: str) -> None:
        """20 started at once (W6), all waited for."""
        started = [subprocess.Popen([node, *flags, *argv], env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                   for _ in range(BURST)]
        for process in started:
            process.wait()

    measure("Node guest to HELLO, from main.mjs", lambda: start(entry), count)
    if blob is not None and blob.is_file():
        snapshot = ("--snapshot-blob", str(blob), "--", entry)
        measure("Node guest to HELLO, from its snapshot", lambda: start(*snapshot), count)
        measure(f"Node guest to HELLO, from its snapshot, {BURST} at once (per burst)",
                lambda: burst(*snapshot), max(3, count // BURST))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--only", action="append", default=[],
                        help="measure only the floors whose name has this in it (repeatable)")
    args = parser.parse_args()
    count = args.count
    ONLY.extend(args.only)
    ballast = bytearray(TEMPLATE_BYTES)
    ballast[::4096] = b"\1" * (len(ballast) // 4096)  # resident, as the template's pages are
    print("| floor | wall per op | machine CPU per op | ops/s back to back |")
    print("| --- | ---: | ---: | ---: |")
    measure("fork", lambda: clone_and_reap(0), count)
    measure("fork, child writes 2 MiB", lambda: fork_and_write(2 * 1024 * 1024), count)
    if wanted("paused hello"):
        paused_hello(max(20, count // 10))
        paused_codec_hello(max(20, count // 10))
    if wanted("RUN decoded"):
        untouched_decode(max(20, count // 10))
    measure("fork, child waits", lambda: fork_and_wait(False), count)
    if cgroups.available().version is not None:
        measure("fork into a run's cgroups", lambda: fork_and_wait(True), count)
        if wanted("join a run's cgroups"):
            cgroup_joins(max(20, count // 10))
    measure("clone namespaces", lambda: clone_and_reap(RUN_NAMESPACES), count)
    measure("clone namespaces, no network",
            lambda: clone_and_reap(RUN_NAMESPACES & ~CLONE_NEWNET), count)
    if wanted("clone namespaces, the parent's part"):
        user_pid = CLONE_NAMESPACES["CLONE_NEWUSER"] | CLONE_NAMESPACES["CLONE_NEWPID"]
        clone_parent_part(RUN_NAMESPACES, count, "all six")
        clone_parent_part(user_pid, count, "user and PID")
    if wanted("clone namespaces, two at once"):
        clone_in_two(RUN_NAMESPACES, count)
    if wanted("namespace made"):
        user = CLONE_NAMESPACES["CLONE_NEWUSER"]
        namespaces_held(user | CLONE_NEWNET, count, "network namespace (and a user one)")
        namespaces_held(user, count, "user namespace alone")
    python = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    measure("python -I -S -c pass", lambda: subprocess.run(
        [python, "-I", "-S", "-c", "pass"], env=GUEST_ENV, check=True), count // 4)
    node = shutil.which("node")
    if node is not None:
        measure("node -e 0", lambda: subprocess.run([node, "-e", "0"], env=GUEST_ENV, check=True),
                count // 4)
        if wanted("Node guest"):
            node_guests(os.path.realpath(node), count // 4)
    del ballast


if __name__ == "__main__":
    main()
