"""The processes that read a program for the check before its run.

A program given to the check is untrusted input, as much as the program a
guest runs: the checker that parses it, lays it out and type-checks it runs
in a process started like a guest (host/guests/launch.py), under the run's
isolation profile and seccomp filter, in a work directory of its own, with a
file view holding only the checker, its type libraries and the program's
declared packages, and limits of its own (memory and processes in a cgroup
where there is one, rlimits everywhere). Nothing of the program is read on
the event loop: the host only writes it to the checker's fd 3.

A checker says ``{"ready": true}`` on fd 3 once it is confined, is given
its limits, then answers one JSON line for each JSON line it is sent
(guest/python/check.py, guest/node/check.mjs). A :class:`CheckerPool`
holds at most ``size`` processes of one kind: a check waits for a free one
or starts one, and its deadline counts from its request, the wait
included, so a slow check holds one process for at most its own deadline
and never the others. A process that misses a deadline is killed; one
that is kept for later checks is retired after ``RETIRE_CHECKS`` checks or
once its memory passes ``CheckerLimits.retire_bytes``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..aio.tasks import Tasks
from ..guests.languages import GuestCommand, MiB
from ..guests.launch import (
    GuestProcess,
    GuestStartError,
    LimitsNotApplied,
    launch,
    new_workdir,
)
from ..guests.process import in_thread, remove_tree
from ..guests.process_limits import ProcessLimits
from ..sandbox.profiles import Sandbox

#: Memory a checker process may hold (the cgroup's ceiling, and its data rlimit).
CHECKER_MEMORY_BYTES = 1024 * MiB
#: Processes and threads in a checker's cgroup.
CHECKER_PROCESSES = 64
#: Descriptors, and the largest file a checker may write.
CHECKER_OPEN_FILES = 256
CHECKER_FILE_BYTES = 16 * MiB
#: The size of each of a checker's writable mounts (its work directory, /tmp).
CHECKER_DISK_BYTES = 64 * MiB
#: Raw stdout and stderr kept of a checker (why it failed).
CHECKER_RAW_OUTPUT_BYTES = 4096
#: Largest answer line read from a checker.
MAX_ANSWER_BYTES = 1 * MiB
#: A checker kept for later checks is retired after this many, or once its
#: resident memory passes RETIRE_BYTES (it grows with what it reads).
RETIRE_CHECKS = 200
RETIRE_BYTES = 512 * MiB


class NotChecked(Exception):
    """The checker could not answer; the message says why, for the result."""


@dataclass(frozen=True, slots=True)
class CheckerLimits:
    """What one checker process may use besides its time: ``cpu_seconds``
    (its RLIMIT_CPU, for a process that answers one check; None for one
    kept for many, which its deadlines bound instead); ``retire_bytes``:
    one kept for many is retired once its resident memory passes it."""

    memory_bytes: int = CHECKER_MEMORY_BYTES
    processes: int = CHECKER_PROCESSES
    cpu_seconds: int | None = None
    retire_bytes: int = RETIRE_BYTES


@dataclass(eq=False)
class CheckerProcess:
    """A started checker: its guest process, its work directory, the
    checks it answered and the memory it last said it held."""

    guest: GuestProcess
    workdir: str
    checks: int = 0
    memory_bytes: int = 0
    _buffer: bytearray = field(default_factory=bytearray)
    _closed: asyncio.Task[None] | None = None

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send ``request``, return the answer line (as JSON)."""
        try:
            await asyncio.get_running_loop().sock_sendall(
                self.guest.child.channel, json.dumps(request).encode() + b"\n")
        except OSError as exc:
            raise NotChecked(f"the checker ended: {exc}") from None
        answer = await self.read()
        self.checks += 1
        return answer

    async def read(self) -> dict[str, Any]:
        """The next line the checker writes, parsed; raises NotChecked when
        it ends first, or writes what is not one JSON object within
        MAX_ANSWER_BYTES."""
        loop = asyncio.get_running_loop()
        while (end := self._buffer.find(b"\n")) < 0:
            if len(self._buffer) > MAX_ANSWER_BYTES:
                raise NotChecked(f"the checker's answer is over {MAX_ANSWER_BYTES} bytes")
            try:
                chunk = await loop.sock_recv(self.guest.child.channel, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                self.guest.child.drain_pipes()
                why = self.guest.child.raw_stderr.text().strip().splitlines()[-1:]
                raise NotChecked("the checker ended" + (f": {why[0]}" if why else ""))
            self._buffer += chunk
        line = bytes(self._buffer[:end])
        del self._buffer[:end + 1]
        try:
            answer = json.loads(line)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise NotChecked("the checker's answer is not a JSON object")
        if isinstance(answer.get("rss"), int):
            self.memory_bytes = answer["rss"]
        return answer

    def limit(self, limits: CheckerLimits) -> None:
        """Its rlimits (inherited by whatever it starts: ty) and its cgroup's
        ceilings, once it is confined and before it reads a program, where
        a run's are applied. The data rlimit, not the address space's: Node
        and ty reserve far more address space than they use."""
        self.guest.apply_limits(ProcessLimits(
            memory_bytes=limits.memory_bytes, cpu_seconds=limits.cpu_seconds,
            open_files=CHECKER_OPEN_FILES, file_bytes=CHECKER_FILE_BYTES,
            processes=limits.processes))

    async def close(self) -> None:
        """Kill it (and all it started), then release its cgroup and work
        directory; once, however many times it is called."""
        while True:
            if self._closed is None or self._closed.cancelled():
                self._closed = asyncio.get_running_loop().create_task(self._close())
            closing = self._closed
            try:
                await asyncio.shield(closing)
                return
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not closing.cancelled() or task is None or task.cancelling():
                    raise
                # The close was cancelled, not its caller (a loop shutting
                # down cancels every task): begin it again, it takes up
                # where it stopped.

    async def _close(self) -> None:
        try:
            await self.guest.terminate(0.0, kill_now=True)
        finally:  # cancelled or not (a loop shutting down cancels every task)
            await self.guest.release(self.workdir)


class CheckerPool:
    """At most ``size`` checker processes of one kind under one profile.
    With ``reuse`` a process answers check after check (the TypeScript
    compiler, whose start-up is the costly part) until it is retired;
    without, each check has a process of its own (ty: a fresh process is
    fast), and from the second check on one more is started and kept
    ready for the next, confined and limited, so that a check does not
    wait for a start (a Runtime made for one check starts none ahead)."""

    def __init__(self, command_for: Callable[[str], GuestCommand], profile: Sandbox, *,
                 size: int, reuse: bool, limits: CheckerLimits = CheckerLimits(),
                 start_timeout: float = 10.0) -> None:
        self._command_for = command_for
        self._profile = profile
        self._limits = limits
        self._reuse = reuse
        self._start_timeout = start_timeout  # of a process started ahead of its check
        self._slots = asyncio.Semaphore(size)
        self._idle: list[CheckerProcess] = []
        self._busy: set[CheckerProcess] = set()
        self._closing: Tasks[None] = Tasks("a checker's cleanup")
        self._started: set[CheckerProcess] = set()  # until closed
        self._spares: Tasks[CheckerProcess | None] = Tasks()
        self._spare: asyncio.Task[CheckerProcess | None] | None = None  # started ahead
        self._closed = False
        #: How many processes this pool has started.
        self.started = 0
        self._taken = 0  # checks that took a process

    async def ask(self, request: dict[str, Any], deadline: float) -> dict[str, Any]:
        """The answer to ``request`` by ``deadline`` (loop time). Raises
        NotChecked when there is none by then, or the checker failed."""
        try:
            async with asyncio.timeout_at(deadline):
                async with self._slots:
                    return await self._ask(request)
        except TimeoutError:
            raise NotChecked("the check did not finish in time") from None

    async def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        process = await self._take()
        self._busy.add(process)
        try:
            if self._closed:
                raise NotChecked("the runtime was closed")
            answer = await process.ask(request)
        except BaseException:  # timed out, failed or cancelled: the process goes
            await self._retired(process)
            raise
        finally:
            self._busy.discard(process)
        if self._reuse and not self._closed and process.checks < RETIRE_CHECKS \
                and process.memory_bytes < self._limits.retire_bytes:
            self._idle.append(process)
        else:
            self._retire(process)
        return answer

    async def _take(self) -> CheckerProcess:
        """An idle process, the one being started ahead (it is further on
        than a new one would be), or a new one; and, without ``reuse``, the
        start of the next one ahead."""
        spare, self._spare = self._spare, None
        if self._idle:
            process: CheckerProcess | None = self._idle.pop()
            self._spare = spare
        elif spare is not None:
            try:
                process = await asyncio.shield(spare)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not spare.cancelled() or task is None or task.cancelling():
                    spare.add_done_callback(self._keep)  # its process waits for the next check
                    raise
                process = None  # the pool is closing
        else:
            process = None
        self._taken += 1
        if not self._reuse and self._spare is None and not self._closed and self._taken > 1:
            self._spare = self._spares.spawn(self._start_spare())
        return process if process is not None else await self._start()

    async def _start(self) -> CheckerProcess:
        """A checker under the pool's profile, confined, limited and ready."""
        self.started += 1
        try:
            workdir = await new_workdir()
        except GuestStartError as exc:
            raise NotChecked(f"the checker could not be started: {exc}") from exc
        try:
            guest = await launch(self._command_for(workdir), workdir, self._profile,
                                 CHECKER_RAW_OUTPUT_BYTES, disk_bytes=CHECKER_DISK_BYTES)
        except BaseException as exc:
            remove_tree(workdir)
            if isinstance(exc, GuestStartError):
                raise NotChecked(f"the checker could not be started: {exc}") from exc
            raise
        process = CheckerProcess(guest, workdir)
        self._started.add(process)
        try:
            ready = await process.read()
            if ready.get("ready") is not True:
                raise NotChecked("the checker did not say it was ready")
            try:
                await in_thread(process.limit, self._limits)
            except LimitsNotApplied as exc:
                raise NotChecked(f"the checker's limits could not be set: {exc}") from exc
        except BaseException:
            await self._retired(process)
            raise
        return process

    async def _start_spare(self) -> CheckerProcess | None:
        """A process started ahead of its check (None where that failed:
        the check starts its own, and says why if it cannot)."""
        try:
            async with asyncio.timeout(self._start_timeout):
                return await self._start()
        except (NotChecked, TimeoutError, OSError):
            return None

    def _keep(self, spare: asyncio.Task[CheckerProcess | None]) -> None:
        """A process started ahead whose check gave up waiting: idle."""
        process = None if spare.cancelled() or spare.exception() else spare.result()
        if process is None:
            return
        if self._closed or self._spare is not None:
            self._retire(process)
        else:
            self._idle.append(process)

    def _retire(self, process: CheckerProcess) -> asyncio.Task[None]:
        return self._closing.spawn(self._close(process))

    async def _close(self, process: CheckerProcess) -> None:
        await process.close()
        self._started.discard(process)

    async def _retired(self, process: CheckerProcess) -> None:
        """Retire it and wait until it is gone: a loop that shuts down
        cancels the caller, and would not run a close only spawned then."""
        await asyncio.wait([self._retire(process)])

    async def aclose(self) -> None:
        """Stop every process, those answering a check too; until each is gone."""
        self._closed = True
        self._spares.cancel()
        await self._spares.all_done()
        spare, self._spare = self._spare, None
        if spare is not None:  # it may have started just before the cancel came
            self._keep(spare)
        idle, self._idle = self._idle, []
        for process in (*idle, *self._busy):
            self._retire(process)
        await self._closing.all_done()
        # A loop that shuts down cancels every task, a close too before it began.
        for process in list(self._started):
            await self._close(process)
