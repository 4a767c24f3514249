"""The embedding API: ``Runtime.run()``, and :class:`RunSession`, runs that
pass their variables on."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import sys
import threading
import warnings
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from tether.codec import (
    DEFAULT_MAX_FRAME_BYTES,
    CallError,
    ErrorCode,
    Value,
    ValueModelError,
    to_wire,
)

from .aio.tasks import Tasks, carrying_exits, unwrapped
from .aio.threads import WorkerThreads
from .bindings import prompt
from .bindings.prepared import BindingsArg, describe_bindings, prepare_bindings
from .check.checker import Checker, invalid
from .guests.languages import (
    LANGUAGES,
    GuestCommand,
    GuestSetup,
    Interpreters,
    Packages,
    guest_command,
    zygote_command,
)
from .guests.launch import GuestStartError, GuestStartTimeout, StartedGuest, bounded
from .guests.pool import (
    ForkStarter,
    GuestPool,
    LauncherStarter,
    PoolConfig,
    SpawnStarter,
    Starter,
    discard,
)
from .guests.remote import Launcher
from .guests.zygote import Zygote
from .limits import Limits
from .result import Diagnostics, RunError, RunResult, RunStats, Status
from .run.approvals import ApproveHook
from .run.checkpoints import CheckpointError, CheckpointKeys, answer_problem, open_checkpoint
from .run.events import Emitter, EventBuffer, RunEvent, combine
from .run.replay import CallLog, Replay
from .run.request import RunRequest
from .run.serving import Serving
from .run.session import Session
from .run.variables import prepare_variables
from .sandbox.profiles import Sandbox, detect, resolve
from .sandbox.seccomp import SeccompUnavailable, SyscallFilter

if TYPE_CHECKING:
    from .tracing import Tracing

#: Room is left in the default frame ceiling for RUN's bindings and limits.
MAX_SOURCE_BYTES = DEFAULT_MAX_FRAME_BYTES - 1024 * 1024
#: What a stream's events may carry while they wait for its consumer.
STREAM_BUFFER_BYTES = 16 * 1024 * 1024


class Runtime:
    """Runs programs, each in a fresh guest process.

    ``limits`` are the defaults for every run; ``env`` adds variables to the
    guest's otherwise empty environment; ``python`` and ``node`` are the
    interpreters the guests run on (default: this Python, and ``node`` found
    on PATH once). ``binding_threads`` is how many sync bindings may run at
    once (each in a thread of the Runtime's own; more calls wait for one):
    tether's own work never waits for them. ``pool`` keeps guests started ahead of time (see
    :class:`PoolConfig`; ``None`` starts every guest at its run). ``sandbox``
    is the isolation profile (:class:`Sandbox`): ``"namespaces"`` (bwrap;
    raises SandboxUnavailable where it cannot work), ``"process"`` (no
    boundary), or ``"auto"``, the default: namespaces where available, else
    process with a RuntimeWarning; ``runtime.sandbox`` says which.
    ``python_packages`` (a virtual environment or a site-packages directory)
    and ``node_packages`` (a directory with a ``node_modules``, or that
    ``node_modules``) are third-party packages programs may import, bound
    read-only into the sandbox; tether's own modules stay out of the
    programs' import path. ``preload`` names modules the CPython fork
    server imports in its template (and warm guests before their run), so
    a program's ``import pandas`` finds it loaded. A Runtime
    belongs to the event loop it is first used on; using it from another
    raises RuntimeError. ``syscall_filter`` is the seccomp filter every guest
    runs under, in every profile (:class:`SyscallFilter`; ``None``: none).
    ``check`` is the default of ``run(check=...)``, ``approve`` of
    ``run(approve=...)``. ``tracing`` (a :class:`tether.host.tracing.Tracing`,
    with the ``otel`` extra) makes an OpenTelemetry span of every run and
    binding call. ``launcher`` starts every guest somewhere else
    (:class:`CommandLauncher`: a container, a pod, another machine, over
    the command's stdio; see docs/scaling.md); then the engine is the
    sandbox, ``sandbox`` must stay ``"auto"`` and ``runtime.sandbox`` is
    ``process`` (the host's own side), while the pool keeps started remote
    guests warm as ``pool`` says. ``checkpoint_key`` seals the
    checkpoints of suspended runs, so that resume refuses any a store
    altered: bytes of at least 32 (``secrets.token_bytes(32)``), or a
    sequence of such, newest first (the first seals, any opens: a key being
    rotated out still opens what it sealed); keep it, and give it to every
    Runtime that resumes them, in any process. None (the default): a random
    key made once per process, so checkpoints resume in this process only.
    Use it as an
    async context manager, so that closing it stops the warm guests and ends
    runs still going (their result has status ``cancelled``)::

        async with Runtime() as rt:
            result = await rt.run("return await add(1, 2)", bindings={"add": add})
    """

    def __init__(  # noqa: PLR0913 - the public options: keywords with defaults
        self,
        *,
        limits: Limits | None = None,
        env: Mapping[str, str] | None = None,
        python: str | None = None,
        node: str | None = None,
        pool: PoolConfig | None = PoolConfig(),  # noqa: B008 - frozen, shared safely
        sandbox: Sandbox | str = Sandbox.AUTO,
        binding_threads: int = 32,
        syscall_filter: SyscallFilter | None = SyscallFilter(),  # noqa: B008 - frozen
        check: bool = False,
        python_packages: str | os.PathLike[str] | None = None,
        node_packages: str | os.PathLike[str] | None = None,
        preload: Sequence[str] = (),
        approve: ApproveHook | None = None,
        tracing: Tracing | None = None,
        launcher: Launcher | None = None,
        checkpoint_key: bytes | Sequence[bytes] | None = None,
    ) -> None:
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError("limits must be a tether.Limits")
        if not isinstance(binding_threads, int) or binding_threads < 1:
            raise ValueError("binding_threads must be a positive int")
        self._binding_threads = WorkerThreads(binding_threads, "tether-binding")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_lock = threading.Lock()
        self.limits = limits or Limits()
        self._env = dict(env or {})
        self._interpreters = Interpreters(python=python or sys.executable, node=node)
        self._packages = Packages.prepare(python_packages, node_packages, preload,
                                          self._interpreters.python)
        self._pool_config = pool or PoolConfig(size=0, fork_server=False)
        if launcher is not None and not isinstance(launcher, Launcher):
            raise TypeError("launcher must be a tether.Launcher (e.g. tether.CommandLauncher)")
        if launcher is not None and Sandbox(sandbox) is not Sandbox.AUTO:
            raise ValueError("sandbox is a local guest's profile; a launcher's guests are "
                             "isolated by its engine (leave sandbox unset)")
        self._launcher = launcher
        self.sandbox = resolve(sandbox) if launcher is None else Sandbox.PROCESS
        self._seccomp = _compile(syscall_filter)  # per profile
        self._pools: dict[tuple[str, int | None, int | None, Sandbox], GuestPool] = {}
        self._zygotes: dict[Sandbox, Zygote] = {}
        self._sessions: dict[Session, asyncio.Future[None]] = {}
        self._teardowns: Tasks[None] = Tasks("a run's cleanup")
        # A cold start's outcome is its run's to read.
        self._cold_starts: Tasks[StartedGuest] = Tasks()
        self._closed = False
        self.check_before_run = check
        self.approve = approve
        self.tracing = tracing
        self._checker = Checker(self._interpreters, seccomp=self._seccomp,
                                packages=self._packages)
        self._checkpoint_keys = CheckpointKeys(checkpoint_key)
        # The check reads the program on this host, whatever starts the guests.
        self._check_sandbox = self.sandbox if launcher is None else \
            Sandbox.NAMESPACES if detect().namespaces else Sandbox.PROCESS

    def _profile(self, sandbox: Sandbox | str | None) -> Sandbox:
        if sandbox is None:
            return self.sandbox
        if self._launcher is not None:
            raise ValueError("sandbox= is a local guest's profile; this Runtime's launcher "
                             "starts its guests elsewhere")
        return resolve(sandbox)

    def _sandbox_name(self, profile: Sandbox) -> str:
        """What a run's statistics name as its sandbox (GuestProcess.sandbox_name)."""
        return self._launcher.name if self._launcher is not None else str(profile)

    def _setup(self, sandbox: Sandbox) -> GuestSetup:
        """What every guest under ``sandbox`` shares."""
        return GuestSetup(self._interpreters, self._env, self._seccomp[sandbox], self._packages)

    def _pool(self, language: str, limits: Limits, sandbox: Sandbox) -> GuestPool:
        # Node's heap limit is a start-up flag, and the size of a guest's
        # writable mounts is fixed when they are made: both are in the key.
        memory = limits.memory_bytes if language != "python" else None
        key = (language, memory, limits.disk_bytes, sandbox)
        pool = self._pools.get(key)
        if pool is None:
            def command_for(workdir: str, warm: bool) -> GuestCommand:
                return guest_command(language, workdir, limits, self._setup(sandbox),
                                     warm=warm)

            spawn = SpawnStarter(command_for, language, limits, sandbox)
            starter: Starter = spawn
            if self._launcher is not None:
                starter = LauncherStarter(self._launcher, language, limits)
            elif language == "python" and self._pool_config.fork_server:
                starter = ForkStarter(self._zygote(sandbox), limits, sandbox, spawn)
            pool = self._pools[key] = GuestPool(starter, self._pool_config)
        return pool

    def _zygote(self, sandbox: Sandbox) -> Zygote:
        """One CPython template per sandbox profile, shared by its pools."""
        zygote = self._zygotes.get(sandbox)
        if zygote is None:
            def command_for(workdir: str, mode: str) -> GuestCommand:
                return zygote_command(workdir, mode, self._setup(sandbox))

            zygote = self._zygotes[sandbox] = Zygote(command_for, sandbox)
        return zygote

    async def run(  # noqa: PLR0913 - the public options: keywords with defaults
        self,
        source: str,
        *,
        language: str = "python",
        bindings: BindingsArg = None,
        limits: Limits | None = None,
        sandbox: Sandbox | str | None = None,
        check: bool | None = None,
        variables: Mapping[str, Any] | None = None,
        last_expression: bool = False,
        on_event: Callable[[RunEvent], object] | None = None,
        approve: ApproveHook | None = None,
        suspendable: bool = False,
    ) -> RunResult:
        """Run ``source`` and return how it ended. With ``check`` (default:
        the Runtime's) the program is first type-checked against its
        bindings' declarations, and one that fails is not run: status
        ``invalid``, the problems in ``diagnostics``.

        ``variables`` (values of the value model) become top-level names of
        the program before it starts, and ask for the program's top-level
        names at its end in ``result.variables`` (pass ``{}`` for those
        alone); ``last_expression``: a program that ends with a bare
        expression returns its value. ``on_event`` is called on the event
        loop with each :data:`~tether.RunEvent` as it happens (see
        :meth:`stream`); ``approve`` (default: the Runtime's) answers the
        calls whose binding requires approval. ``suspendable`` logs every
        call, so that a binding raising :class:`~tether.Suspend` ends the
        run with status ``suspended`` and a ``checkpoint`` for
        :meth:`resume`. Never raises for what the
        program did; raises ValueError/TypeError for bad arguments,
        SandboxUnavailable for a sandbox this machine lacks, GuestUnavailable
        when the language's interpreter (Node.js) is missing, RuntimeError if
        the Runtime is closed already (a run whose guest is still starting
        when it closes ends ``cancelled``), and
        CancelledError if the calling task is cancelled (after cleaning up)."""
        self._check_loop()
        if self._closed:
            raise RuntimeError("this Runtime is closed")
        if not isinstance(source, str):
            raise TypeError("source must be a str")
        try:
            size = len(source.encode())
        except UnicodeEncodeError as exc:
            raise ValueError(f"source is not valid Unicode text: {exc}") from None
        if size > MAX_SOURCE_BYTES:  # RUN must fit the default frame ceiling (R-LIMIT-2)
            raise ValueError(f"source is {size} bytes; at most {MAX_SOURCE_BYTES} are accepted")
        if language not in LANGUAGES:
            raise ValueError(f"unsupported language {language!r}; tether runs: "
                             f"{', '.join(LANGUAGES)}")
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError("limits must be a tether.Limits")
        limits = limits or self.limits
        profile = self._profile(sandbox)
        prepared = prepare_bindings(bindings, language)
        wire_variables = None if variables is None else \
            prepare_variables(variables, prepared, limits)
        report = None
        if self.check_before_run if check is None else check:
            found = await self._checker.check(
                source, language, [b.description for b in prepared.values()],
                variables or (), sandbox=profile if self._launcher is None
                else self._check_sandbox)
            if found:
                return invalid(found)
            report = found.report
        request = RunRequest(source, language, prepared, limits, wire_variables,
                             bool(last_expression), self._checkpoint_keys)
        result = await self._start(request, profile, on_event, Serving(
            approve=approve, log=CallLog(limits.checkpoint_bytes) if suspendable else None))
        return result if report is None else dataclasses.replace(result, check=report)

    async def resume(self, checkpoint: bytes, value: Any = None, *,  # noqa: PLR0913 - public
                     error: BaseException | None = None,
                     bindings: BindingsArg = None, limits: Limits | None = None,
                     sandbox: Sandbox | str | None = None,
                     on_event: Callable[[RunEvent], object] | None = None,
                     approve: ApproveHook | None = None) -> RunResult:
        """Go on with a run that ended with status ``suspended``: its program
        runs again from the start in a new guest, its calls up to the
        suspension point are answered from the checkpoint's log (no binding
        is called; those still in flight when it suspended run live), the
        call that suspended returns ``value``, and the run goes on live,
        with ``bindings`` (the same names as the suspended run's) and
        suspendable again, under ``limits`` (default: the Runtime's; a
        checkpoint carries none). With ``error`` instead of a value the call
        that suspended raises it, as a binding that raised it would (a
        person refused what it asked, say). A program that calls something
        else than the log says, or ends before its suspension point, ends
        with a ``ResumeDiverged`` error. The checkpoint is read as hostile
        input (docs/checkpoints.md): raises
        :class:`~tether.host.CheckpointError` (a ValueError) for
        bytes that are no checkpoint of this version, were altered or sealed
        with another ``checkpoint_key``, do not fit ``limits``, or whose
        bindings are not those given; ValueError/TypeError for a ``value``
        outside the value model or ``limits.value_bytes``."""
        self._check_loop()
        if self._closed:
            raise RuntimeError("this Runtime is closed")
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError("limits must be a tether.Limits")
        limits = limits or self.limits
        if error is not None and value is not None:
            raise TypeError("resume takes a value or an error, not both")
        wire_value = _resume_error(error, limits) if error is not None else \
            _resume_value(value, limits)
        opened = await open_checkpoint(checkpoint, self._checkpoint_keys, limits)
        saved = opened.checkpoint
        if saved.language not in LANGUAGES:
            raise CheckpointError(f"the checkpoint's language {saved.language!r} is not one "
                                  f"tether runs ({', '.join(LANGUAGES)})")
        if len(saved.source.encode(errors="surrogatepass")) > MAX_SOURCE_BYTES:
            raise CheckpointError(f"the checkpoint's source is over {MAX_SOURCE_BYTES} bytes")
        prepared = prepare_bindings(bindings, saved.language)
        if sorted(prepared) != sorted(saved.bindings):
            raise CheckpointError(f"the checkpoint's bindings are {sorted(saved.bindings)}; "
                                  f"resume was given {sorted(prepared)}")
        try:
            variables = None if saved.variables is None else \
                prepare_variables(saved.variables, prepared, limits)
        except (TypeError, ValueError) as exc:
            raise CheckpointError(f"the checkpoint's variables: {exc}") from None
        replay = Replay(saved.calls, wire_value,
                        CallLog(limits.checkpoint_bytes, used=opened.size))
        request = RunRequest(saved.source, saved.language, prepared, limits, variables,
                             saved.last_expression, self._checkpoint_keys)
        return await self._start(request, self._profile(sandbox), on_event,
                                 Serving(approve=approve, log=replay.log, replay=replay))

    async def _start(self, request: RunRequest, profile: Sandbox,
                     on_event: Callable[[RunEvent], object] | None,
                     serving: Serving) -> RunResult:
        """Run ``request`` in a guest of ``profile``. Its calls are served
        as ``serving`` says, on the Runtime's binding threads, with the
        Runtime's ``approve`` hook where ``serving`` has none; ``on_event``
        and the Runtime's tracing observe it beside ``serving``'s log."""
        language, limits = request.language, request.limits
        pool = self._pool(language, limits, profile)
        asked = asyncio.get_running_loop().time()
        try:
            # A guest forked for this run counts in its time, so the fork
            # (queued behind others' under load) is cut short at its timeout.
            async with asyncio.timeout(limits.timeout):
                ready = await pool.acquire()
        except TimeoutError:
            return RunResult(status=Status.TIMEOUT, stats=RunStats(
                wall_time=asyncio.get_running_loop().time() - asked,
                sandbox=self._sandbox_name(profile)), error=RunError(
                    "Timeout", f"no guest was ready within {limits.timeout:g} s; "
                               "the program did not run"))
        if ready is not None and ready.since is None:
            # A guest forked for this run counts in its time, as a cold one does.
            ready.since, ready.deadline = asked, asked + limits.timeout
        if ready is None and not self._closed:
            # A task of its own, so that closing the Runtime stops it (a cold
            # guest from a Node snapshot is started until its HELLO).
            start = self._cold_starts.spawn(pool.start_cold(limits))
            since = asyncio.get_running_loop().time()
            try:
                ready = await start
            except GuestStartError as exc:  # out of processes or descriptors; the engine refused
                stats = RunStats(wall_time=asyncio.get_running_loop().time() - since,
                                 sandbox=self._sandbox_name(profile))
                if isinstance(exc, GuestStartTimeout):
                    return RunResult(status=Status.TIMEOUT, stats=stats, error=RunError(
                        "Timeout", f"the guest did not start within {limits.timeout:g} s "
                                   f"({exc}); the program did not run"))
                return RunResult(status=Status.CRASHED, stats=stats, error=RunError(
                    "GuestCrashed", f"the guest could not be started: {exc}"))
            except asyncio.CancelledError:
                start.add_done_callback(self._discard_started)
                task = asyncio.current_task()
                # The caller's cancellation, not the Runtime's closing, goes on.
                if not self._closed or (task is not None and task.cancelling() > 0):
                    raise
        if self._closed:  # closed while this run's guest was starting
            if ready is not None:
                self._defer(discard(ready))  # one that aclose() waits for
            return RunResult(status=Status.CANCELLED, error=RunError(
                "Cancelled", "the runtime was closed before the program started"))
        assert ready is not None
        trace = None if self.tracing is None else self.tracing.start(language, str(profile))
        session = Session(request, ready, defer=self._defer, serving=dataclasses.replace(
            serving, threads=self._binding_threads,
            observer=combine(None if on_event is None else
                             Emitter(on_event, limits.output_bytes), trace, serving.log),
            approve=self.approve if serving.approve is None else serving.approve))
        ended = asyncio.get_running_loop().create_future()
        self._sessions[session] = ended
        result: RunResult | None = None
        try:
            result = await session.run()
            return result
        finally:
            if trace is not None:
                trace.end(result)
            del self._sessions[session]
            ended.set_result(None)
            pool.refill()  # a start that failed, or a target that grew, since acquire()

    async def stream(self, source: str, *, buffer: int = 1024,
                     buffer_bytes: int = STREAM_BUFFER_BYTES,
                     **options: Any) -> AsyncIterator[RunEvent | RunResult]:
        """Run ``source`` like :meth:`run` (same ``options``) and yield its
        events as they happen, then the :class:`RunResult` last::

            async for item in rt.stream("print('hi')"):
                if isinstance(item, tether.Printed):
                    print(item.text, end="")

        At most ``buffer`` events, carrying at most ``buffer_bytes`` of text,
        arguments and values between them (as encoded on the wire: the
        ``size`` of a call's events), wait for a consumer that lags; past
        that, newer ones are dropped and an :class:`~tether.EventsDropped`
        counts them, so the program never waits for the consumer and never
        fills the host's memory. Leaving the loop early cancels the run; a
        KeyboardInterrupt or SystemExit a binding raised is raised here."""
        if "on_event" in options:
            raise TypeError("stream() takes no on_event")
        events = EventBuffer(buffer, buffer_bytes)
        # A binding's KeyboardInterrupt or SystemExit is raised here, to the
        # consumer, once the run is cleaned up: raised from the run's own
        # task it would stop the event loop instead.
        run = asyncio.ensure_future(carrying_exits(
            self.run(source, on_event=events.put, **options)))
        try:
            while not run.done():
                for event in await events.events(run):
                    yield event
            for event in await events.events(run):
                yield event
            yield unwrapped(run.result())
        finally:
            if not run.done():
                run.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await run

    def session(
        self,
        variables: Mapping[str, Any] | None = None,
        *,
        language: str = "python",
        bindings: BindingsArg = None,
        limits: Limits | None = None,
        sandbox: Sandbox | str | None = None,
        last_expression: bool = False,
    ) -> RunSession:
        """A :class:`RunSession`: runs that pass their variables on to the
        next run, starting from ``variables`` (e.g. what ``save()`` gave)::

            async with rt.session() as s:
                await s.run("rows = await load()", bindings={"load": load})
                result = await s.run("return len(rows)")
        """
        return RunSession(self, variables, SessionOptions(language, bindings, limits, sandbox,
                                                          last_expression))

    def _check_loop(self) -> None:
        """Bind to the running loop on first use; refuse any other loop (the
        Runtime's guests, futures and readers live on its first one, and a
        wait from another loop would never end)."""
        loop = asyncio.get_running_loop()
        with self._loop_lock:
            if self._loop is None:
                self._loop = loop
            elif self._loop is not loop:
                raise RuntimeError(
                    "this Runtime is used from a second event loop; a Runtime belongs to the "
                    "loop it was first used on (make one Runtime per loop or thread)")

    async def check(self, source: str, *, language: str = "python",
                    bindings: BindingsArg = None,
                    variables: Iterable[str] = ()) -> Diagnostics:
        """Type-check ``source`` against the bindings' declarations without
        running it: the problems found, each with line and column, as a tuple
        (empty when there are none). Its ``checked`` is False, and its
        ``reason`` says why, when no checker could say (none installed, a
        program over the size the check reads, out of time): then it is
        empty too. ``variables``: the names the run will define
        (``run(variables=...)``'s keys; a mapping gives its keys)."""
        self._check_loop()
        if self._closed:  # its checkers are stopped
            raise RuntimeError("this Runtime is closed")
        if language not in LANGUAGES:
            raise ValueError(f"unsupported language {language!r}")
        if not isinstance(source, str):
            raise TypeError("source must be a str")
        return await self._checker.check(source, language, describe_bindings(bindings),
                                         variables, sandbox=self._check_sandbox)

    def describe(self, bindings: BindingsArg, *, language: str = "python",
                 limits: Limits | None = None, summary_only: bool = False) -> str:
        """The text to give the model: the program contract for ``language``
        (with ``limits``, default this Runtime's) and the bindings'
        declarations, or with ``summary_only`` their names and one-line
        summaries; the third-party packages programs may import are named.
        Raises ValueError/TypeError for bindings that cannot be described."""
        modules = self._packages.python_modules() if language == "python" \
            else self._packages.node_modules()
        return prompt.text(describe_bindings(bindings), language, limits or self.limits,
                           summary_only=summary_only, modules=modules)

    def _defer(self, teardown: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """``teardown`` as a task that :meth:`aclose` waits for."""
        return self._teardowns.spawn(teardown)

    def _discard_started(self, start: asyncio.Task[StartedGuest]) -> None:
        """A cold start whose run stopped waiting for it: the guest it
        started all the same, as it came or after, will not run."""
        if not start.cancelled() and start.exception() is None:
            self._defer(discard(start.result()))

    async def aclose(self) -> None:
        """Stop the warm guests, end every run still going (status
        ``cancelled``) and refuse new ones."""
        self._check_loop()
        self._closed = True
        try:
            for session in self._sessions:
                session.cancel()
            self._cold_starts.cancel()
            await self._cold_starts.all_done()
            await asyncio.gather(*self._sessions.values(),
                                 *(pool.aclose() for pool in self._pools.values()))
            await self._teardowns.all_done()  # those deferred meanwhile too
            if self._launcher is not None:  # bounded and logged, like its other hooks
                await bounded(self._launcher.aclose)
        finally:
            try:
                await self._checker.aclose()
            finally:
                # Idle threads exit now; one stuck in a sync binding exits when
                # its call returns (a daemon: it never holds the process up).
                self._binding_threads.shutdown(wait=False, cancel_futures=True)

    async def __aenter__(self) -> Runtime:
        self._check_loop()
        if self._closed:  # its prestarted guests could never run
            raise RuntimeError("this Runtime is closed")
        for language in self._pool_config.prestart:
            self._pool(language, self.limits, self.sandbox).refill()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _resume_error(error: BaseException, limits: Limits) -> CallError:
    """The error resume makes the suspended call raise, as a binding's (R-RESULT-6)."""
    return CallError(ErrorCode.BINDING_ERROR, type(error).__name__,
                     str(error)).fitted(limits.value_bytes)


def _resume_value(value: Any, limits: Limits) -> Any:
    """The answer resume gives the suspended call, as a wire value that fits ``limits``."""
    try:
        wire = to_wire(value, limits.max_depth)
    except ValueModelError as exc:
        raise TypeError(f"value is outside the value model: {exc}") from None
    problem = answer_problem(wire, limits)
    if problem is not None:
        raise ValueError(f"value {problem}")
    return wire


def _compile(syscall_filter: SyscallFilter | None) -> dict[Sandbox, bytes]:
    """The filter's BPF for each profile: only ``namespaces`` gives a run an
    IPC namespace of its own."""
    if syscall_filter is None:
        return dict.fromkeys(Sandbox, b"")
    if not isinstance(syscall_filter, SyscallFilter):
        raise TypeError("syscall_filter must be a tether.SyscallFilter or None")
    try:
        return {profile: syscall_filter.bpf(private_ipc=profile is Sandbox.NAMESPACES)
                for profile in Sandbox}
    except SeccompUnavailable as exc:
        warnings.warn(f"tether: {exc}; programs run without a seccomp filter",
                      RuntimeWarning, stacklevel=3)
        return dict.fromkeys(Sandbox, b"")


@dataclasses.dataclass(frozen=True)
class SessionOptions:
    """The options of :meth:`Runtime.session` that its runs share."""

    language: str = "python"
    bindings: BindingsArg = None
    limits: Limits | None = None
    sandbox: Sandbox | str | None = None
    last_expression: bool = False


class RunSession:
    """Runs programs one after the other, each in a fresh guest process,
    passing the variables each run ends with to the next run as values
    (spec §7.9). Nothing else carries over: not open files, not imported
    modules, not functions the program defined.

    Made by :meth:`Runtime.session`. ``variables`` is the state the next
    run starts with: a plain dict of values, to save (e.g. as JSON when the
    values allow) and give to a new session later. A run that ends before
    its program did (timeout, crash, cancelled) leaves it as it was; a
    program that raised still passes on what it had assigned, as a notebook
    cell does.
    """

    #: The variables the next run starts with (values of the value model).
    variables: dict[str, Any]
    #: Every run's result, in order.
    results: list[RunResult]

    def __init__(self, runtime: Runtime, variables: Mapping[str, Any] | None,
                 shared: SessionOptions) -> None:
        """``shared``: what every run of the session is given unless it says otherwise."""
        self._runtime = runtime
        self.variables = dict(variables or {})
        self.language = shared.language
        self.bindings = shared.bindings
        self.limits = shared.limits
        self.sandbox = shared.sandbox
        self.last_expression = shared.last_expression
        self.results = []

    async def run(self, source: str, *, language: str | None = None,
                  bindings: BindingsArg = None, limits: Limits | None = None,
                  last_expression: bool | None = None) -> RunResult:
        """Run ``source`` with the session's variables; the arguments
        default to the session's own. A variable named as one of this run's
        bindings is not passed to it (the binding takes the name) and is
        kept for later runs."""
        bindings = bindings if bindings is not None else self.bindings
        names = set(prepare_bindings(bindings))
        withheld = {k: v for k, v in self.variables.items() if k in names}
        result = await self._runtime.run(
            source,
            language=language or self.language,
            bindings=bindings,
            limits=limits or self.limits,
            sandbox=self.sandbox,
            variables={k: v for k, v in self.variables.items() if k not in names},
            last_expression=self.last_expression if last_expression is None else last_expression,
        )
        if result.variables is not None:
            self.variables = {**withheld, **result.variables}
        self.results.append(result)
        return result

    def save(self) -> dict[str, Value]:
        """The variables the next run would start with, as plain data; give
        them back as ``Runtime.session(variables=...)``."""
        return dict(self.variables)

    async def __aenter__(self) -> RunSession:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        return None  # every run cleaned up after itself already
