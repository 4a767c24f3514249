"""Warm guests: processes started ahead of time, each used for one run.

A warm guest has started its interpreter (or was forked from the CPython
template, host/guests/zygote.py), loaded the shim and said HELLO; it waits for RUN.
A run takes one (when none is ready: forks one, or starts one cold) and the
guest dies with the run, exactly like a cold one, so nothing ever carries
from one program to the next. The pool refills in the background, starting
a replacement as soon as a guest is taken, and lets
its guests (and the template) go after ``idle_timeout`` seconds without a
run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tether.codec import CONNECTION_CLOSED, NEED_DATA, Connection, Hello, ProtocolError, Role

from ..aio.reader import STEP_BYTES, between_steps
from ..aio.tasks import Tasks
from ..limits import Limits
from ..sandbox.profiles import Sandbox
from . import node_snapshot
from .languages import GuestCommand
from .launch import (
    GuestProcess,
    GuestStartError,
    GuestStartTimeout,
    LimitsNotApplied,
    StartedGuest,
    bounded,
    launch,
    new_workdir,
    run_connection,
)
from .process import Child, in_thread, remove_tree
from .process_limits import ProcessLimits
from .remote import Launcher, remote_connection
from .zygote import TemplateStopped, Zygote, ZygoteError

#: How long a warm guest may take to say HELLO before it is given up.
START_TIMEOUT = 30.0
#: Forks that fail in a row before Python guests are started as new interpreters.
FORK_ATTEMPTS = 3
#: Runs at least this far apart leave a waiting guest time to make its heap
#: ready (guest/python/heap.py); closer ones would wait for guests doing it.
PACED_SECONDS = 0.05
#: Guests a pool started on this machine starts at once, at most: started
#: together they share its CPUs and each is ready only about when all are;
#: a few at a time, the first is ready soonest, so a run that finds the pool
#: empty waits less (figures: bench/README.md).
LOCAL_STARTS_AT_ONCE = max(2, len(os.sched_getaffinity(0)))

logger = logging.getLogger("tether")


@dataclass(frozen=True, slots=True)
class PoolConfig:
    """Warm guests per language (and, for Node, per memory limit).

    - ``size``: guests kept ready; 0 turns the pool off (every run starts cold).
    - ``max_size``: how far the pool grows, one guest for each run that found
      it empty (a burst: many agents at once); it is ``size`` again once it
      has been idle.
    - ``idle_timeout``: seconds without a run after which the ready guests are
      stopped (the next run starts cold and refills the pool).
    - ``prestart``: languages to warm as soon as the Runtime is entered; others
      are warmed by their first run.
    - ``fork_server``: Python guests are forked from a template process that
      has loaded the guest but never runs a program (host/guests/zygote.py), not
      started as new interpreters; a run that finds no ready guest forks one
      (milliseconds) instead of starting one cold.
    """

    size: int = 2
    max_size: int = 8
    idle_timeout: float = 120.0
    prestart: tuple[str, ...] = ()
    fork_server: bool = True

    def __post_init__(self) -> None:
        if self.size < 0 or self.idle_timeout <= 0:
            raise ValueError("PoolConfig.size must be >= 0 and idle_timeout > 0")


class Starter(Protocol):
    """How a pool gets its guests. ``starts_on_demand``: fast enough to start
    one for a run that finds the pool empty, rather than start it cold."""

    @property
    def starts_on_demand(self) -> bool: ...

    @property
    def starts_at_once(self) -> int | None:
        """How many guests the pool starts at once, at most (None: any)."""

    async def start(self, *, ahead: bool = True, paced: bool = False) -> StartedGuest:
        """A ready guest. ``ahead``: it will wait in the pool; else a run is
        waiting for it, and it is made ready the quickest way. ``paced``:
        runs come far apart, so a waiting guest has time for more."""

    async def start_cold(self, limits: Limits) -> StartedGuest:
        """A guest for a run that found none ready (its HELLO still to come)."""

    def idle(self) -> None:
        """No run for the idle timeout: release what is kept for starting."""

    async def aclose(self) -> None: ...


class SpawnStarter:
    """Each guest a new interpreter (Node; Python without a fork server)."""

    starts_on_demand = False  # a run that finds no guest ready starts its own
    starts_at_once = LOCAL_STARTS_AT_ONCE

    def __init__(self, command_for: Callable[[str, bool], GuestCommand], language: str,
                 limits: Limits, profile: Sandbox) -> None:
        """``command_for(workdir, warm)``: the guest's command line;
        ``limits``: those of the pool's runs that fix how a guest starts
        (``disk_bytes``, Node's heap), and whose cgroup ceilings a waiting
        guest takes ahead of its run. Its rlimits are its run's to set
        (host/run/session.py): lowered ahead, a hard limit could not be raised
        again for a run that needs more."""
        self._command_for = command_for
        self._language = language
        self._limits = limits
        self._profile = profile

    async def start(self, *, ahead: bool = True, paced: bool = False) -> StartedGuest:
        return await self._start(True, self._limits)

    def _prepare(self, launched: GuestProcess) -> None:
        launched.apply_limits(ProcessLimits.of_run(self._language, self._limits.wire()),
                              ahead=True)

    async def start_cold(self, limits: Limits) -> StartedGuest:
        return await self._start(False, limits)

    async def _start(self, warm: bool, limits: Limits) -> StartedGuest:
        """A guest from a startup snapshot is not given to a run before its
        HELLO. One that ends before it is started again from main.mjs; if
        that one starts, node refused the blob (host/guests/node_snapshot.py), and
        the run never sees it."""
        loop = asyncio.get_running_loop()
        since = loop.time()
        suspect: Path | None = None
        try:
            while True:
                workdir = await new_workdir()
                command = self._command_for(workdir, warm)
                try:
                    launched = await launch(command, workdir, self._profile,
                                            limits.raw_output_bytes, disk_bytes=limits.disk_bytes)
                except BaseException:
                    remove_tree(workdir)
                    raise
                blob = command.snapshot
                if not warm and blob is None and suspect is None:  # the run reads its HELLO
                    return StartedGuest(launched, workdir, run_connection(limits), since=since)
                # A cold guest's HELLO counts in its run's timeout, as where the run reads it.
                deadline = loop.time() + limits.timeout
                try:
                    guest = await (until_hello(launched, workdir, self._prepare) if warm else
                                   until_hello(launched, workdir, conn=run_connection(limits),
                                               run_timeout=limits.timeout))
                except GuestEndedEarly:
                    if blob is None or suspect is not None:
                        raise
                    suspect = blob
                    node_snapshot.suspect(blob)  # the next guest starts from main.mjs
                    continue
                if suspect is not None and guest.hello is not None:
                    removed = node_snapshot.condemn(suspect)
                    logger.warning("tether: node could not start from its snapshot %s%s",
                                   suspect, ", which is removed and built again" if removed else "")
                    suspect = None
                if not warm:
                    guest.since, guest.deadline = since, deadline
                return guest
        finally:
            if suspect is not None:  # main.mjs failed too (or said nothing in time)
                node_snapshot.acquit(suspect)

    def idle(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


class ForkStarter:
    """Each guest forked by the runtime's CPython template (host/guests/zygote.py).
    Where forking keeps failing (say, user namespaces are disallowed inside
    the sandbox), guests are started as new interpreters instead."""

    starts_at_once = LOCAL_STARTS_AT_ONCE

    def __init__(self, zygote: Zygote, limits: Limits, profile: Sandbox,
                 fallback: SpawnStarter) -> None:
        self._zygote = zygote
        self._limits = limits
        self._private = profile is Sandbox.NAMESPACES  # a tmpfs of its own per run
        self._fallback = fallback
        self._failures = 0

    @property
    def starts_on_demand(self) -> bool:
        return self._failures < FORK_ATTEMPTS

    async def start(self, *, ahead: bool = True, paced: bool = False) -> StartedGuest:
        if not self.starts_on_demand:
            return await self._fallback.start(ahead=ahead, paced=paced)
        workdir = None if self._private else await new_workdir()
        try:
            try:
                launched = await self._zygote.fork(workdir, self._limits.raw_output_bytes,
                                                   self._limits.disk_bytes, rehearse=ahead,
                                                   heap=ahead and paced)
            except BaseException:
                if workdir is not None:
                    remove_tree(workdir)
                raise
            guest = await until_hello(launched, workdir, self._prepare)
        except (OSError, TemplateStopped) as exc:  # says nothing of forking (descriptors ran out)
            raise GuestStartError(str(exc)) from exc
        except LimitsNotApplied:  # nor does this: the fork worked
            raise
        except (ZygoteError, GuestStartError) as exc:
            self._failures += 1
            if not self.starts_on_demand:
                logger.warning("tether: Python guests cannot be forked here, so each starts "
                               "as a new interpreter: %s %s", exc, self._zygote.stderr())
            raise GuestStartError(str(exc)) from exc
        self._failures = 0
        return guest

    async def start_cold(self, limits: Limits) -> StartedGuest:
        return await self._fallback.start_cold(limits)

    def _prepare(self, launched: GuestProcess) -> None:
        launched.adopt_forked()
        launched.apply_limits(ProcessLimits.of_run("python", self._limits.wire()), ahead=True)

    def idle(self) -> None:
        self._zygote.stop_when_unused()

    async def aclose(self) -> None:
        await self._zygote.aclose()


class LauncherStarter:
    """Each guest started by a :class:`~tether.host.guests.remote.Launcher`
    somewhere else; warm ones have said HELLO (their preamble skipped) and
    wait there for their run.

    The launcher's start is bounded: a warm guest has START_TIMEOUT to be
    started and say HELLO; a cold one's start counts in its run's timeout,
    as a local cold guest's does. A start still going then is cancelled
    (the launcher releases what it made so far) and, should the launcher
    return a guest all the same, that guest is ended; :meth:`aclose` waits
    for both, up to REMOTE_STOP_TIMEOUT."""

    starts_on_demand = False  # a container or a pod takes long: a run without one starts its own
    starts_at_once = None  # elsewhere, and mostly waiting: no CPU of this machine to share

    def __init__(self, launcher: Launcher, language: str, limits: Limits) -> None:
        self._launcher = launcher
        self._language = language
        self._limits = limits
        # Starts given up (their outcome is read by _given_up), and the
        # guests they returned all the same, being ended.
        self._given_up: Tasks[None] = Tasks("a late guest's cleanup")

    async def start(self, *, ahead: bool = True, paced: bool = False) -> StartedGuest:
        deadline = asyncio.get_running_loop().time() + START_TIMEOUT
        launched = await self._start_by(deadline, self._limits, warm=True)
        if launched is None:
            raise GuestStartError(f"the launcher did not start a guest within "
                                  f"{START_TIMEOUT:g} s")
        try:
            async with asyncio.timeout_at(deadline):  # until_hello releases it when cut short
                return await until_hello(launched, None, conn=remote_connection(launched))
        except TimeoutError as exc:
            raise GuestStartError(f"the guest did not say HELLO within {START_TIMEOUT:g} s "
                                  "of its start") from exc

    async def start_cold(self, limits: Limits) -> StartedGuest:
        loop = asyncio.get_running_loop()
        since = loop.time()
        deadline = since + limits.timeout  # the start counts in the run's timeout
        launched = await self._start_by(deadline, limits, warm=False)
        if launched is None:
            logger.warning("tether: the launcher %r did not start a guest within the run's "
                           "timeout (%g s)", self._launcher.name, limits.timeout)
            raise GuestStartTimeout(f"the launcher {self._launcher.name} did not start it")
        return StartedGuest(launched, None, remote_connection(launched, limits), since=since,
                            deadline=deadline)

    async def _start_by(self, deadline: float, limits: Limits, *,
                        warm: bool) -> GuestProcess | None:
        """The launcher's guest, or None when its start has not ended by
        ``deadline`` (loop time): the start is cancelled then, and a guest
        it returns all the same is ended. A start whose caller is cancelled
        is given up the same way."""
        loop = asyncio.get_running_loop()
        start = loop.create_task(self._start(limits, warm=warm))
        try:
            await asyncio.wait({start}, timeout=max(0.0, deadline - loop.time()))
        except BaseException:  # a guest it started, just now or later, is ended
            start.cancel()
            self._given_up.spawn(self._end_late(start))
            raise
        if not start.done():
            start.cancel()
            self._given_up.spawn(self._end_late(start))
            return None
        if start.cancelled():  # by the launcher itself
            raise GuestStartError("the launcher's start was cancelled")
        return start.result()

    async def _end_late(self, start: asyncio.Task[GuestProcess]) -> None:
        """Wait for a start that was given up; end the guest it returned."""
        try:
            launched = await start
        except (Exception, asyncio.CancelledError):  # cancelled as asked, or failed
            return
        logger.info("tether: a launcher returned a guest after its start was given up; "
                    "it is ended")
        await end_process(launched)

    async def _start(self, limits: Limits, *, warm: bool) -> GuestProcess:
        try:
            return await self._launcher.start(self._language, limits, warm=warm)
        except GuestStartError:
            raise
        except Exception as exc:  # the engine refused (OSError, its client's errors)
            raise GuestStartError(f"{type(exc).__name__}: {exc}") from exc

    def idle(self) -> None:
        pass

    async def aclose(self) -> None:
        """Wait for the starts given up and the guests they returned (at
        most REMOTE_STOP_TIMEOUT: a launcher that ignores its cancellation
        cannot hold the Runtime's close)."""
        await bounded(self._given_up.all_done)


class GuestEndedEarly(GuestStartError):
    """The guest ended (or closed its channel) before its HELLO."""


async def until_hello(launched: GuestProcess, workdir: str | None,
                      then: Callable[[GuestProcess], None] | None = None, *,
                      conn: Connection | None = None,
                      run_timeout: float | None = None) -> StartedGuest:
    """Wait for the guest's HELLO on ``conn`` (then ``then`` prepares it for
    its run); anything else is a start error, and the guest is released.
    ``run_timeout``: the guest is for a run that waits, and is handed to it
    without its HELLO once the run's time is up (the run then times out)."""
    if conn is None:
        conn = Connection(Role.HOST, step_bytes=STEP_BYTES, between_steps=between_steps)
    try:
        try:
            async with asyncio.timeout(START_TIMEOUT if run_timeout is None else run_timeout):
                hello = await _hello(conn, launched.child)
        except TimeoutError:
            if run_timeout is None:
                raise
            return StartedGuest(launched, workdir, conn)
        if then is not None:
            await in_thread(then, launched)
        return StartedGuest(launched, workdir, conn, hello)
    except (GuestStartError, ProtocolError, TimeoutError, OSError, ValueError, IndexError,
            asyncio.CancelledError) as exc:
        try:
            with contextlib.suppress(OSError):
                await launched.terminate(0.1, kill_now=True)
            launched.child.drain_pipes()  # what it said before it went
        finally:
            await launched.release(workdir)
        if isinstance(exc, asyncio.CancelledError):
            raise
        said = launched.child.raw_stderr.text().strip()
        kind = type(exc) if isinstance(exc, GuestStartError) else GuestStartError
        raise kind(f"{exc}: {said}" if said else str(exc)) from exc


async def _hello(conn: Connection, child: Child) -> Hello:
    loop = asyncio.get_running_loop()
    while True:
        event = conn.next_event()
        if isinstance(event, Hello):
            return event
        if event is CONNECTION_CLOSED:
            raise GuestEndedEarly("the guest ended before its HELLO")
        if event is not NEED_DATA:
            raise GuestStartError(f"expected HELLO, got {event!r}")
        data = await loop.sock_recv(child.channel, 65536)
        if not data:
            conn.receive_eof()
        else:
            conn.receive_data(data)


class GuestPool:
    """Ready guests of one kind, refilled in the background."""

    def __init__(self, starter: Starter, config: PoolConfig) -> None:
        self._starter = starter
        self._config = config
        self._ready: deque[StartedGuest] = deque()
        self._starts: Tasks[None] = Tasks("a guest's start")
        # Not cancelled by close: one cut short leaves its guest unreaped.
        self._endings: Tasks[None] = Tasks("a guest's cleanup")
        self._starting = 0  # starts in flight, those waiting for a slot among them
        at_once = starter.starts_at_once
        self._slots: contextlib.AbstractAsyncContextManager[Any] = (
            contextlib.nullcontext() if at_once is None else asyncio.Semaphore(at_once))
        self._idle: asyncio.TimerHandle | None = None
        self._last_run = 0.0  # loop time
        self._closed = False
        self._target = config.size  # what refill keeps ready: grows with demand
        self._paced = False  # the last two runs came PACED_SECONDS apart or more

    async def acquire(self) -> StartedGuest | None:
        """A ready guest; when none is, a new one if the starter starts on demand,
        else None (then :meth:`start_cold`). The guest taken is replaced at
        once: back to back, the next run comes before a guest started after
        this one's run would be ready (a fork into new namespaces takes longer
        than a hello). A run's own fork goes first; the replacement is asked
        for after it. Call :meth:`refill` after the run too (a start that
        failed, a target that grew)."""
        guest = None
        while self._ready and guest is None:
            candidate = self._ready.popleft()
            if candidate.child.exited.done():  # died while waiting: discard
                self._end_guest(candidate)
            else:
                guest = candidate
        busy = self._idle is not None  # not the first run since the pool was let go
        self._paced = busy and asyncio.get_running_loop().time() - self._last_run >= PACED_SECONDS
        self._touch()
        if guest is None and busy and self._target:  # a run waits: keep one more ready
            self._target = min(self._target + 1, max(self._config.max_size, self._config.size))
        if guest is None and self._starter.starts_on_demand and not self._closed:
            with contextlib.suppress(GuestStartError):
                guest = await self._starter.start(ahead=False)
        self.refill()  # its replacement starts now, not after the run
        return guest

    async def start_cold(self, limits: Limits) -> StartedGuest:
        """A new interpreter for one run with ``limits``, its HELLO to come."""
        return await self._starter.start_cold(limits)

    def _touch(self) -> None:
        """A run came: push the idle deadline back (the timer, set once, looks
        at the time of the last run when it fires)."""
        loop = asyncio.get_running_loop()
        self._last_run = loop.time()
        if self._idle is None and not self._closed:
            self._idle = loop.call_at(self._last_run + self._config.idle_timeout, self._idled)

    def _idled(self) -> None:
        self._idle = None
        deadline = self._last_run + self._config.idle_timeout
        if asyncio.get_running_loop().time() < deadline:  # a run came meanwhile
            self._idle = asyncio.get_running_loop().call_at(deadline, self._idled)
        else:
            self._let_go()

    def refill(self) -> None:
        """Start guests until ``size`` are ready or starting."""
        if self._closed or self._config.size == 0:
            return
        if self._idle is None:
            self._touch()
        missing = self._target - len(self._ready) - self._starting
        for _ in range(max(0, missing)):
            self._starting += 1
            self._starts.spawn(self._start_one())

    def _end_guest(self, guest: StartedGuest) -> None:
        # After the set's own callback: the ended guest is out of it by then.
        self._endings.spawn(discard(guest)).add_done_callback(lambda _: self._idle_starter())

    def _idle_starter(self) -> None:
        """Once let go, and no guest of the pool is starting or still being
        ended, release what the starter keeps (a template waits for the last
        guest it forked)."""
        if not self._closed and self._idle is None and not self._starting and not self._endings:
            self._starter.idle()

    async def _start_one(self) -> None:
        guest: StartedGuest | None = None
        try:
            async with self._slots:
                guest = await self._starter.start(paced=self._paced)
        except GuestStartError:
            pass  # the next run starts cold and shows the real error
        finally:
            self._starting -= 1
        if guest is None:
            self._idle_starter()
        elif self._closed or self._idle is None:  # closed, or let go while it started
            self._end_guest(guest)
        else:
            self._ready.append(guest)

    def _let_go(self) -> None:
        self._idle = None
        self._target = self._config.size
        while self._ready:
            self._end_guest(self._ready.popleft())
        self._idle_starter()

    async def aclose(self) -> None:
        self._closed = True
        if self._idle is not None:
            self._idle.cancel()
        self._starts.cancel()
        await self._starts.all_done()
        while self._ready:
            self._end_guest(self._ready.popleft())
        await self._endings.all_done()
        await self._starter.aclose()


async def discard(guest: StartedGuest) -> None:
    """Kill a guest that will not run (and release what it holds)."""
    await end_process(guest.process, guest.workdir)


async def end_process(process: GuestProcess, workdir: str | None = None) -> None:
    """Kill a started guest's processes no run will have, then release what
    they hold (``workdir`` too)."""
    try:
        with contextlib.suppress(Exception):
            await process.terminate(0.1, kill_now=True)
    finally:
        await process.release(workdir)
