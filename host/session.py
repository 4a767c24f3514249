"""One run, from spawn to cleanup: the host role of the protocol on asyncio.

The codec decides what is legal; this module serves binding calls, keeps
output within its cap, maps how the run ended onto a :class:`RunResult`, and
always tears everything down: calls cancelled, process group killed and
reaped, descriptors closed, work directory removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import signal
import sys
import tempfile
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from tether.codec import (
    CONNECTION_CLOSED,
    Call,
    CallError,
    Cancel,
    Connection,
    Done,
    Error,
    ErrorCode,
    Event,
    Hello,
    Message,
    Output,
    ProtocolError,
    RemoteProtocolError,
    Result,
    Role,
    Run,
    State,
    ValueModelError,
    count_items,
    encode_payload,
    encode_payload_in_steps,
    exceeds_value_items,
    to_wire_plain,
    value_items,
    variable_name_problem,
)

from .bindings import HostBinding
from .channel import Channel
from .guests import NODE_MIN_DATA, GuestCommand, Interpreters, Packages, guest_command
from .limits import Limits
from .output import CappedOutput
from .pool import ReadyGuest
from .process import Child, remove_tree
from .reader import STEP_BYTES, Reader, between_steps, decoding
from .result import RunError, RunResult, RunStats, Status
from .sandbox import Launched, Sandbox, cpu_seconds, launch, memory_use
from .threads import WorkerThreads


@dataclass(frozen=True, slots=True)
class Ending:
    """How the run ended, before the result is assembled."""

    status: Status
    error: RunError | None = None
    value: Any = None
    limit: str | None = None
    killed_after_done: bool = False
    variables: dict[str, Any] | None = None
    dropped_variables: dict[str, str] | None = None


logger = logging.getLogger("tether")

#: What V8 prints when --max-old-space-size is reached (the process then aborts).
_HEAP_EXHAUSTED = ("JavaScript heap out of memory", "Reached heap limit")
#: A guest that reports running out of memory is believed when it has used
#: this much of its memory rlimit (what is left is smaller than most requests)...
_NEAR_THE_LIMIT = 0.9
#: ...or when the run's cgroup saw this much of it resident: at its
#: address-space limit a process has at least this share in memory, the rest
#: being files the interpreter mapped and never touched.
_RESIDENT_SHARE = 0.5


def _crash(message: str) -> Ending:
    return Ending(Status.CRASHED, RunError("GuestCrashed", message))


class Session:
    def __init__(
        self,
        source: str,
        language: str,
        bindings: Mapping[str, HostBinding],
        limits: Limits,
        *,
        interpreters: Interpreters,
        env: Mapping[str, str] | None = None,
        sandbox: Sandbox = Sandbox.PROCESS,
        ready: ReadyGuest | None = None,
        defer: Callable[[Coroutine[Any, Any, None]], None] | None = None,
        command: GuestCommand | None = None,
        wire_tap: Callable[[str, bytes], None] | None = None,
        binding_threads: Executor | None = None,
        seccomp: bytes = b"",
        variables: dict[str, Any] | None = None,
        last_expression: bool = False,
        packages: Packages = Packages(),  # noqa: B008 - frozen, shared safely
    ) -> None:
        """``ready`` is a warm guest to adopt instead of starting one;
        ``defer`` takes the teardown after a DONE, to finish after run() returns
        (without it, run() returns only once everything is reaped).
        ``command`` replaces the language's guest and ``wire_tap`` sees every
        byte on fd 3: both exist for the conformance runner and recorder.
        ``binding_threads`` runs sync bindings (default: a pool of this run's own).
        ``seccomp``: the filter a guest started here runs under.
        ``variables`` (wire values) and ``last_expression`` go into RUN (§7.9)."""
        self.source = source
        self.variables = variables
        self.last_expression = last_expression
        self._packages = packages
        self.language = language
        self.bindings = bindings
        self.limits = limits
        self._interpreters = interpreters
        self._env = env
        self._sandbox = sandbox
        self._ready = ready
        self._launched: Launched | None = None
        self._cpu: float | None = None
        self._defer = defer
        self._command = command
        self._wire_tap = wire_tap
        self._seccomp = seccomp
        self._conn = Connection(Role.HOST, step_bytes=STEP_BYTES, between_steps=between_steps,
                                max_frame_bytes=limits.frame_bytes,
                                max_depth=limits.max_depth)
        self._channel: Channel | None = None
        self._reader: Reader | None = None
        self._held: list[tuple[Message, bytes | None]] = []
        self._ending: asyncio.Future[Ending] | None = None
        self._calls: dict[int, asyncio.Task[None]] = {}
        self._call_count = 0
        self._output = CappedOutput(limits.output_bytes)
        self._binding_threads = binding_threads or _own_binding_threads()
        #: A KeyboardInterrupt or SystemExit a binding raised: the run ends,
        #: and run() raises it once everything is cleaned up.
        self._host_exit: BaseException | None = None

    # -- the run -----------------------------------------------------------

    async def run(self) -> RunResult:
        result = await self._run()
        if self._host_exit is not None:
            raise self._host_exit
        return result

    async def _run(self) -> RunResult:
        loop = asyncio.get_running_loop()
        self._ending = loop.create_future()
        ready = self._ready
        cold_dir = None if ready else tempfile.mkdtemp(prefix="tether-run-")
        workdir = ready.workdir if ready else cold_dir
        child: Child | None = None
        started = loop.time()
        ending = Ending(Status.CANCELLED, RunError("Cancelled", "the run was cancelled"))
        try:
            if ready is not None:
                self._launched = ready.launched
                self._conn = ready.conn
            else:
                assert cold_dir is not None
                command = self._command or guest_command(
                    self.language, cold_dir, self.limits, self._interpreters, self._env,
                    seccomp=self._seccomp, packages=self._packages)
                self._launched = await launch(command, cold_dir, self.limits, self._sandbox,
                                              self.limits.raw_output_bytes)
            child = self._launched.child
            child.raw_stdout.limit = child.raw_stderr.limit = self.limits.raw_output_bytes
            self._channel = Channel(child.channel, self._on_data, self._on_eof, self._wire_tap)
            self._reader = Reader(self._conn, self._channel, on_event=self._on_event,
                                  on_error=self._on_read_error,
                                  finished=lambda: self._finished, on_idle=self._send_held)
            if ready is not None:
                try:
                    self._on_hello(ready.hello)
                except RemoteProtocolError as exc:
                    self._protocol_failure(exc)
            try:
                async with asyncio.timeout(self.limits.timeout):
                    ending = await self._until_end(child)
            except TimeoutError:
                ending = Ending(Status.TIMEOUT, RunError(
                    "Timeout", f"the program did not finish within {self.limits.timeout:g} s"))
            wall_time = loop.time() - started
            self._cpu = cpu_seconds(self._launched.program_pid())
            if ending.killed_after_done and self._defer is not None:
                # The result is known: nothing of the program may run on, so the
                # group is killed and its calls cancelled now; reaping and
                # removing the work directory happen after run() returns.
                self._stop_calls()
                assert self._launched is not None
                self._launched.kill()
                result = self._result(ending, child, wall_time, None)
                self._defer(self._teardown(ending, workdir))
                child = None
                return result
            exit_code = await self._shut_down(ending)
            result = self._result(ending, child, wall_time, exit_code)
            if self._defer is not None:
                # Every process of the run is gone: removing its cgroup and
                # work directory need not delay the result.
                self._defer(self._release(workdir))
                child = None
            return result
        finally:
            # Reached with an exception too, e.g. when run() itself is cancelled.
            if child is not None:
                if child.returncode is None:
                    await asyncio.shield(self._shut_down(ending))
                await self._release(workdir)
            elif cold_dir is not None and self._launched is None:
                remove_tree(cold_dir)  # the spawn itself failed

    async def _teardown(self, ending: Ending, workdir: str | None) -> None:
        try:
            await self._shut_down(ending)
        finally:
            await self._release(workdir)

    async def _release(self, workdir: str | None) -> None:
        """Every host-side resource of the run (after its processes are gone)."""
        assert self._launched is not None
        await self._launched.release(workdir)

    def cancel(self) -> None:
        """End the run now with status ``cancelled`` (the runtime is closing)."""
        self._finish(Ending(Status.CANCELLED, RunError("Cancelled", "the runtime was closed")))

    async def _until_end(self, child: Child) -> Ending:
        assert self._ending is not None
        waiting: set[asyncio.Future[Any]] = {self._ending, child.exited}
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        # The guest exited: whatever it sent is already in the socket buffer.
        assert self._channel is not None and self._reader is not None
        while not self._ending.done():
            drained = self._channel.read_available(everything=True)
            await self._reader.settled()
            if drained:
                break
        if not self._ending.done() or self._ending.result().status is Status.CRASHED:
            # Ended without DONE: the exit status tells a crash from a limit.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(child.exited), self.limits.kill_grace)
            if child.exited.done():
                assert self._launched is not None
                code = self._launched.guest_status(child.exited.result())
                if self._launched is not None and self._launched.cgroup is not None and \
                        self._launched.cgroup.out_of_memory():
                    return Ending(Status.LIMIT, RunError(
                        "LimitExceeded", "the program ran out of memory"), limit="memory_bytes")
                if code == -signal.SIGXCPU:
                    return Ending(Status.LIMIT, RunError(
                        "LimitExceeded", "the program used up its CPU time"), limit="cpu_seconds")
                child.drain_pipes()
                if code < 0 and any(marker in child.raw_stderr.text()
                                    for marker in _HEAP_EXHAUSTED):  # V8 aborts at its heap limit
                    return Ending(Status.LIMIT, RunError(
                        "LimitExceeded", "the program ran out of memory"), limit="memory_bytes")
                return _crash(f"the guest exited ({_describe_exit(code)}) before finishing")
        return self._ending.result()

    async def _shut_down(self, ending: Ending) -> int:
        self._finish(ending)
        if ending.status is Status.TIMEOUT and self._conn.state is State.RUNNING:
            self._send(Cancel(reason="timeout"))  # a courtesy (R-CANCEL-1)
        calls = self._stop_calls()
        await asyncio.gather(*calls, return_exceptions=True)
        assert self._launched is not None
        return await self._launched.terminate(self.limits.kill_grace,
                                              kill_now=ending.killed_after_done)

    def _stop_calls(self) -> list[asyncio.Task[None]]:
        """Close the channel and cancel the binding calls in flight (R-TERM-3)."""
        if self._channel is not None:
            self._channel.close()
        calls = list(self._calls.values())
        for task in calls:
            task.cancel()
        return calls

    def _finish(self, ending: Ending) -> None:
        if self._ending is not None and not self._ending.done():
            self._ending.set_result(ending)
            if self._channel is not None:
                self._channel.pause_reading()

    @property
    def _finished(self) -> bool:
        return self._ending is None or self._ending.done()

    # -- frames from the guest ---------------------------------------------

    def _on_data(self, data: bytes) -> None:
        assert self._reader is not None
        self._reader.feed(data)

    def _on_eof(self) -> None:
        assert self._reader is not None
        self._reader.eof()

    def _on_event(self, event: Event) -> None:
        if event is CONNECTION_CLOSED:
            self._finish(_crash("the guest closed its channel before finishing"))
        elif isinstance(event, Hello):
            self._on_hello(event)
        elif isinstance(event, Call):
            self._on_call(event)
        elif isinstance(event, Output):
            self._on_output(event)
        elif isinstance(event, Done):
            self._finish(self._on_done(event))
        elif isinstance(event, Error):
            self._finish(Ending(Status.PROTOCOL_ERROR, RunError(
                "ProtocolError", f"the guest reported {event.code.name}: {event.message}")))

    def _on_read_error(self, exc: Exception) -> None:
        if isinstance(exc, RemoteProtocolError):
            self._protocol_failure(exc)
            return
        # A bug of ours: end the run rather than hang it.
        logger.error("tether: internal error while reading the guest's frames", exc_info=exc)
        self._finish(Ending(Status.PROTOCOL_ERROR, RunError(
            "InternalError", f"the host failed on the guest's frames: {exc!r}")))

    def _protocol_failure(self, exc: RemoteProtocolError) -> None:
        self._send(Error(exc.code, exc.message))  # R-ERR-1
        self._finish(Ending(Status.PROTOCOL_ERROR, RunError(
            "ProtocolError", f"the guest broke the protocol: {exc}")))

    def _on_hello(self, hello: Hello) -> None:
        if self.language not in hello.languages:
            raise RemoteProtocolError(ErrorCode.LANGUAGE_UNSUPPORTED,
                                      f"the guest does not run {self.language!r}")
        assert self._launched is not None
        self._launched.apply_limits(self.language, self.limits)
        limits = self.limits.wire()
        if self.variables is not None:
            limits = dataclasses.replace(limits, variables_bytes=self.limits.variables_bytes)
        self._send(Run(
            source=self.source,
            language=self.language,
            bindings=tuple(b.wire for b in self.bindings.values()),
            limits=limits,
            variables=self.variables,
            last_expression=self.last_expression,
        ))

    def _on_output(self, output: Output) -> None:
        self._output.add(output.stream.value, output.text)

    def _on_done(self, done: Done) -> Ending:
        ending = self._ending_of(done)
        if done.variables is None:
            return ending
        problem = self._variables_problem(done)
        if problem is not None:  # a forged DONE must not break the next run's RUN
            return Ending(Status.PROTOCOL_ERROR, RunError(
                "ProtocolError", f"the guest broke the protocol: {problem}"),
                killed_after_done=True)
        return dataclasses.replace(ending, variables=done.variables,
                                   dropped_variables=done.dropped)

    def _variables_problem(self, done: Done) -> str | None:
        """How DONE's variables break R-VARS-4/5, or None."""
        assert done.variables is not None
        for name in done.variables:
            problem = variable_name_problem(name)
            if problem is not None:
                return f"DONE.variables: {name!r} {problem}"
        budget = self.limits.variables_bytes
        items = value_items(budget)
        if self._conn.last_payload_size > min(budget, items):  # else they surely fit
            payload = encode_payload({"dropped": done.dropped or {},
                                      "variables": done.variables})
            if len(payload) - 1 > budget:
                return (f"DONE's variables take {len(payload) - 1} bytes, over "
                        f"variables_bytes ({budget})")
            if count_items(payload, items + 3) > items + 3:  # the map, its two keys
                return f"DONE's variables hold more than {items} values"
        return None

    def _ending_of(self, done: Done) -> Ending:
        if done.error is None:
            return Ending(Status.OK, value=done.value, killed_after_done=True)
        e = done.error
        error = RunError(e.type, e.message, e.traceback, e.line)
        if e.code is ErrorCode.VALUE_TOO_LARGE:
            return Ending(Status.LIMIT, error, limit="value_bytes", killed_after_done=True)
        out_of_memory = e.type == "MemoryError" or (  # Python; Node under RLIMIT_DATA:
            e.type == "RangeError" and "allocation failed" in e.message)
        if out_of_memory and self._memory_exhausted():
            return Ending(Status.LIMIT, error, limit="memory_bytes", killed_after_done=True)
        return Ending(Status.ERROR, error, killed_after_done=True)

    def _memory_exhausted(self) -> bool:
        """Whether the host sees the run at its memory limit: the guest's
        error alone is only its claim (a program can raise MemoryError, or
        forge a DONE, at will)."""
        limit = self.limits.memory_bytes
        assert self._launched is not None
        if limit is None:
            return False
        cgroup = self._launched.cgroup
        if cgroup is not None:
            peak = cgroup.peak_memory()
            if cgroup.ceiling_reached() or (peak is not None and peak >= limit * _RESIDENT_SHARE):
                return True
        # The rlimit the allocation ran into, if the guest is still there to
        # ask: address space (Python) or data (Node).
        used = memory_use(self._launched.program_pid(), peak=self.language == "python")
        floor = limit if self.language == "python" else max(limit, NODE_MIN_DATA)
        return used is not None and used >= floor * _NEAR_THE_LIMIT

    # -- binding calls -----------------------------------------------------

    def _on_call(self, call: Call) -> None:
        self._call_count += 1
        binding = self.bindings.get(call.name)
        refusal: CallError | None = None
        if self._conn.state is State.CANCELLING:
            refusal = CallError(ErrorCode.CANCELLED, "Cancelled", "the run is ending")
        elif binding is None:
            refusal = CallError(ErrorCode.UNKNOWN_BINDING, "NameError",
                                f"no binding named {call.name!r}")
        elif len(self._conn.calls_in_flight) > self.limits.max_calls_in_flight:
            # The codec counts this CALL already; a call leaves the count when
            # its RESULT is sent, as the guest sees it (R-CALL-3).
            refusal = CallError(ErrorCode.TOO_MANY_CALLS, "TooManyCalls",
                                f"over max_calls_in_flight ({self.limits.max_calls_in_flight})")
        elif (self._conn.last_payload_size > self.limits.value_bytes  # else it surely fits
              and self._arguments_size(call) > self.limits.value_bytes):
            refusal = CallError(ErrorCode.VALUE_TOO_LARGE, "ValueTooLarge",
                                f"arguments exceed {self.limits.value_bytes} bytes")
        if refusal is not None or binding is None:
            self._send(Result(id=call.id, error=refusal))
            return
        task = _start_task(self._serve(call, binding))
        if not task.done():
            self._calls[call.id] = task

    def _arguments_size(self, call: Call) -> int:
        """The encoded size of ``[args, kwargs]``, from the CALL's payload
        (deterministic, so the envelope's bytes are known) rather than by
        encoding the arguments again."""
        envelope = len(encode_payload(Call(id=call.id, name=call.name, args=[], kwargs={})
                                      .to_wire()))
        return self._conn.last_payload_size - envelope + 3  # 82, less the empty 80 and a0

    async def _serve(self, call: Call, binding: HostBinding) -> None:
        try:
            await self._answer(call, binding)
        finally:
            self._calls.pop(call.id, None)

    async def _answer(self, call: Call, binding: HostBinding) -> None:
        """Every outcome of a binding answers its call. A KeyboardInterrupt
        or SystemExit (meant for the host process) also ends the run, and
        reaches run()'s caller after the cleanup; a cancellation by the host
        (the run is ending) is the only outcome that sends nothing."""
        payload = None
        try:
            result, payload = await self._outcome(call, binding)
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # the host cancels the call: the run is ending (R-TERM-3)
            result = _binding_error(call.id, exc)  # the binding's own cancellation
        except (KeyboardInterrupt, SystemExit) as exc:
            self._send(Result(id=call.id, error=CallError(
                ErrorCode.BINDING_ERROR, type(exc).__name__, "the host is stopping")))
            self._host_exit = exc
            self._finish(Ending(Status.CANCELLED, RunError(
                "Cancelled", f"the host is stopping: {call.name}() raised "
                             f"{type(exc).__name__}")))
            return
        except BaseException as exc:  # GeneratorExit, BaseException subclasses
            result = _binding_error(call.id, exc)
        self._send(result, payload)

    async def _outcome(self, call: Call, binding: HostBinding) -> tuple[Result, bytes | None]:
        timeout = asyncio.timeout(self.limits.call_timeout) if self.limits.call_timeout else None
        try:
            if timeout is None:
                value = await binding.invoke(call.args, call.kwargs, self._binding_threads)
            else:
                async with timeout:
                    value = await binding.invoke(call.args, call.kwargs, self._binding_threads)
        except TimeoutError as exc:
            if timeout is None or not timeout.expired():  # the binding's own TimeoutError
                return _binding_error(call.id, exc), None
            return Result(id=call.id, error=CallError(
                ErrorCode.CALL_TIMEOUT, "CallTimeout",
                f"{call.name}() did not finish within {self.limits.call_timeout:g} s")), None
        except Exception as exc:  # the binding's failure is the program's data
            return _binding_error(call.id, exc), None
        if _large(value):  # converting and encoding it would hold the loop
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(
                decoding, functools.partial(self._result_for, call, value, in_steps=True))
        return self._result_for(call, value)

    def _result_for(self, call: Call, value: Any, *,
                    in_steps: bool = False) -> tuple[Result, bytes | None]:
        """The RESULT for a binding's return value, and its payload when it is
        a value (encoded once: to size it and to send it; ``in_steps`` in
        the decoding thread, handing the interpreter over between steps)."""
        try:
            wire, plain = to_wire_plain(value, self.limits.max_depth)
        except ValueModelError as exc:
            return Result(id=call.id, error=CallError(
                ErrorCode.INVALID_VALUE, "InvalidValue",
                f"{call.name}() returned a value outside the value model: {exc}")), None
        except Exception as exc:  # converting it ran the value's own code, which failed
            return Result(id=call.id, error=CallError(
                ErrorCode.INVALID_VALUE, "InvalidValue",
                f"{call.name}() returned a value that cannot be converted: "
                f"{type(exc).__name__}: {exc}")), None
        result = Result(id=call.id, value=wire)
        if in_steps:
            payload = encode_payload_in_steps(result.to_wire(), plain=plain,
                                              between_steps=between_steps)
        else:
            payload = encode_payload(result.to_wire(), plain=plain)
        if len(payload) > self.limits.value_bytes and (  # else the value surely fits
                len(payload) - len(encode_payload(Result(id=call.id).to_wire())) + 1
                > self.limits.value_bytes):  # the envelope with null, less the null
            return Result(id=call.id, error=CallError(
                ErrorCode.VALUE_TOO_LARGE, "ValueTooLarge",
                f"{call.name}() returned more than {self.limits.value_bytes} bytes")), None
        if exceeds_value_items(payload, self.limits.value_bytes, 4):  # map, id, its key, "value"
            return Result(id=call.id, error=CallError(
                ErrorCode.VALUE_TOO_LARGE, "ValueTooLarge",
                f"{call.name}() returned more than {value_items(self.limits.value_bytes)} "
                f"values (value_bytes / 16)")), None
        return result, payload

    def _send(self, message: Message, payload: bytes | None = None) -> None:
        if self._channel is None or (self._finished and not isinstance(message, Cancel | Error)):
            return
        if self._reader is not None and self._reader.busy:
            self._held.append((message, payload))  # the connection is in the decoding thread
            return
        try:
            data = self._conn.send(message, payload)
        except ProtocolError:
            return  # e.g. RESULT racing the end of the run: nothing to say
        self._channel.write(data)

    def _send_held(self) -> None:
        held, self._held = self._held, []
        for message, payload in held:
            self._send(message, payload)

    # -- the result --------------------------------------------------------

    def _result(self, ending: Ending, child: Child, wall_time: float,
                exit_code: int | None) -> RunResult:
        child.drain_pipes()
        assert self._channel is not None and self._launched is not None
        launched = self._launched
        return RunResult(
            status=ending.status,
            value=ending.value,
            error=ending.error,
            chunks=self._output.chunks(),
            limit=ending.limit,
            raw_stdout=child.raw_stdout.text(),
            raw_stderr=child.raw_stderr.text(),
            variables=ending.variables,
            dropped_variables=ending.dropped_variables or {},
            stats=RunStats(
                sandbox=str(self._sandbox),
                cpu_seconds=self._cpu,
                peak_memory_bytes=launched.cgroup.peak_memory() if launched.cgroup else None,
                wall_time=wall_time,
                calls=self._call_count,
                bytes_in=self._channel.bytes_in,
                bytes_out=self._channel.bytes_out,
                output_truncated=self._output.truncated,
                raw_output_truncated=child.raw_stdout.truncated or child.raw_stderr.truncated,
                exit_code=None if exit_code is None else launched.guest_status(exit_code),
            ),
        )


if sys.version_info >= (3, 12):
    def _start_task(coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Runs at once up to its first wait: a binding that answers without
        waiting costs no trip through the event loop."""
        return asyncio.Task(coro, loop=asyncio.get_running_loop(), eager_start=True)
else:
    def _start_task(coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        return asyncio.get_running_loop().create_task(coro)


def _large(value: Any, budget: int = 4096) -> bool:
    """Whether ``value`` holds more than ``budget`` items (looking at no more
    than that many): a binding's result that large is converted and encoded
    off the event loop."""
    stack = [value]
    try:
        while stack:
            item = stack.pop()
            if isinstance(item, dict | list | tuple):
                budget -= len(item) * (2 if isinstance(item, dict) else 1)
                if budget < 0:
                    return True
                stack.extend(item.values() if isinstance(item, dict) else item)
    except Exception:  # the value's own code failed: the conversion will say so
        return False
    return False


@functools.cache
def _own_binding_threads() -> WorkerThreads:
    """Sync bindings of sessions made without a Runtime's pool (the
    conformance runner): a pool of their own, never tether's."""
    return WorkerThreads(8, "tether-binding")


def _binding_error(call_id: int, exc: BaseException) -> Result:
    """Only the exception's class name and text cross: no host traceback (R-RESULT-3)."""
    error = CallError(ErrorCode.BINDING_ERROR, type(exc).__name__, str(exc))
    return Result(id=call_id, error=error)




def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"
