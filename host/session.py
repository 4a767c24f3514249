"""One run on a started guest (host/launch.py), to its cleanup: the host
role of the protocol on asyncio.

The codec decides what is legal; this module dispatches the guest's frames,
serves binding calls, assembles the :class:`RunResult` (how the run ended is
decided in host/endings.py), and always tears everything down: calls
cancelled, process group killed and reaped, descriptors closed, work
directory removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import sys
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import Executor
from typing import Any

from tether.codec import (
    CONNECTION_CLOSED,
    Call,
    CallError,
    Cancel,
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
    Run,
    State,
    ValueModelError,
    count_items,
    encode_payload,
    encode_payload_in_steps,
    holds_more_items,
    to_wire_plain,
    value_excess,
    value_items,
    variable_name_problem,
)

from .approvals import ApproveHook, Clock, Edit, Gate
from .bindings import HostBinding
from .channel import Channel
from .checkpoints import CallLog, Checkpoint, Replay, Suspend
from .endings import (
    Ending,
    at_memory_limit,
    claims_out_of_memory,
    crash,
    done_ending,
    exit_ending,
)
from .events import Observer
from .launch import GuestProcess, StartedGuest
from .limits import Limits
from .output import CappedOutput
from .process import Child
from .reader import Reader, between_steps, decoding
from .result import RunError, RunResult, RunStats, Status
from .threads import WorkerThreads

logger = logging.getLogger("tether")


#: A binding's result holding more items than this is converted and encoded
#: off the event loop.
LARGE_ITEMS = 4096


class Session:
    def __init__(
        self,
        source: str,
        language: str,
        bindings: Mapping[str, HostBinding],
        limits: Limits,
        guest: StartedGuest,
        *,
        defer: Callable[[Coroutine[Any, Any, None]], asyncio.Future[None]] | None = None,
        wire_tap: Callable[[str, bytes], None] | None = None,
        binding_threads: Executor | None = None,
        variables: dict[str, Any] | None = None,
        last_expression: bool = False,
        observer: Observer | None = None,
        approve: ApproveHook | None = None,
        log: CallLog | None = None,
        replay: Replay | None = None,
    ) -> None:
        """``guest`` is the started guest the run uses (and ends with it);
        ``defer`` takes the teardown after a DONE, to finish after run() returns
        (without it, run() returns only once everything is reaped).
        ``wire_tap`` sees every byte on fd 3 (the conformance runner and
        recorder).
        ``binding_threads`` runs sync bindings (default: a pool of this run's own).
        ``variables`` (wire values) and ``last_expression`` go into RUN (§7.9).
        ``observer`` is told about output and calls as they happen;
        ``approve`` answers the calls whose binding requires approval.
        ``log`` (also among the observers) makes the run suspendable;
        ``replay`` answers a resumed run's calls up to its suspension point."""
        self.source = source
        self.variables = variables
        self.last_expression = last_expression
        self.language = language
        self.bindings = bindings
        self.limits = limits
        self._guest = guest
        self._launched: GuestProcess | None = None
        self._cpu: float | None = None
        self._defer = defer
        self._wire_tap = wire_tap
        self._conn = guest.conn
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
        self._observer = observer
        self._approve = approve
        self._clock = Clock()
        self._gate: Gate | None = None
        self._log = log
        self._replay = replay

    # -- the run -----------------------------------------------------------

    async def run(self) -> RunResult:
        result = await self._run()
        if self._host_exit is not None:
            raise self._host_exit
        return result

    async def _run(self) -> RunResult:
        loop = asyncio.get_running_loop()
        self._ending = loop.create_future()
        guest = self._guest
        workdir = guest.workdir
        started = loop.time() if guest.since is None else guest.since
        ending = Ending(Status.CANCELLED, RunError("Cancelled", "the run was cancelled"))
        self._launched = guest.process
        child = self._launched.child
        # Until the teardown is deferred: what the finally clause must end.
        owned: Child | None = child
        try:
            child.raw_stdout.limit = child.raw_stderr.limit = self.limits.raw_output_bytes
            self._channel = Channel(child.channel, self._on_data, self._on_eof, self._wire_tap)
            self._reader = Reader(self._conn, self._channel, on_event=self._on_event,
                                  on_error=self._on_read_error,
                                  finished=lambda: self._finished, on_idle=self._send_held)
            if guest.hello is not None:
                try:
                    self._on_hello(guest.hello)
                except RemoteProtocolError as exc:
                    self._protocol_failure(exc)
            try:
                async with asyncio.timeout(self.limits.timeout) as deadline:
                    self._clock.deadline = deadline  # paused while an approval waits
                    ending = await self._until_end(child)
            except TimeoutError:
                ending = Ending(Status.TIMEOUT, RunError(
                    "Timeout", f"the program did not finish within {self.limits.timeout:g} s"))
            wall_time = loop.time() - started
            self._cpu = self._launched.cpu_seconds()
            if ending.after_done and self._defer is not None:
                # The result is known: nothing of the program may run on, so the
                # group is killed and its calls cancelled now; reaping and
                # removing the work directory happen after run() returns.
                self._stop_calls()
                assert self._launched is not None
                self._launched.kill()
                result = self._result(ending, child, wall_time, None)
                self._defer(self._teardown(ending, workdir))
                owned = None
                return result
            exit_code = await self._shut_down(ending)
            result = self._result(ending, child, wall_time, exit_code)
            if self._defer is not None:
                # Every process of the run is gone: removing its cgroup and
                # work directory need not delay the result.
                self._defer(self._release(workdir))
                owned = None
            return result
        finally:
            # Reached with an exception too, e.g. when run() itself is cancelled
            # (perhaps twice): the teardown is a task of its own, which the
            # Runtime's close waits for, so a second cancellation cannot cut
            # it short.
            if owned is not None:
                teardown = self._teardown(ending, workdir)
                await asyncio.shield(self._defer(teardown) if self._defer is not None
                                     else asyncio.ensure_future(teardown))

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
                cgroup = self._launched.cgroup
                child.drain_pipes()
                return exit_ending(self._launched.guest_status(child.exited.result()),
                                   cgroup_out_of_memory=cgroup is not None
                                   and cgroup.out_of_memory(),
                                   stderr=child.raw_stderr.text())
        return self._ending.result()

    async def _shut_down(self, ending: Ending) -> int:
        self._finish(ending)
        if ending.status is Status.TIMEOUT and self._conn.state is State.RUNNING:
            self._send(Cancel(reason="timeout"))  # a courtesy (R-CANCEL-1)
        calls = self._stop_calls()
        await asyncio.gather(*calls, return_exceptions=True)
        assert self._launched is not None
        return await self._launched.terminate(self.limits.kill_grace,
                                              kill_now=ending.after_done)

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
            self._finish(crash("the guest closed its channel before finishing"))
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
        if self._replay is not None and self._replay.replaying:
            return  # printed before the suspension point: shown by the suspended run
        self._output.add(output.stream.value, output.text)
        if self._observer is not None:
            self._observer.output(output.stream.value, output.text)

    def _on_done(self, done: Done) -> Ending:
        ending = done_ending(done, at_memory_limit=claims_out_of_memory(done)
                             and self._memory_exhausted())
        if done.variables is None:
            return ending
        problem = self._variables_problem(done)
        if problem is not None:  # a forged DONE must not break the next run's RUN
            return Ending(Status.PROTOCOL_ERROR, RunError(
                "ProtocolError", f"the guest broke the protocol: {problem}"),
                after_done=True)
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

    def _memory_exhausted(self) -> bool:
        """Whether the host sees the run at its memory limit: the guest's
        error alone is only its claim."""
        assert self._launched is not None
        if self.limits.memory_bytes is None:
            return False
        cgroup = self._launched.cgroup
        if cgroup is not None and at_memory_limit(
                self.limits.memory_bytes, self.language, ceiling_reached=cgroup.ceiling_reached(),
                peak=cgroup.peak_memory(), used=None):
            return True
        # The rlimit the allocation ran into, if the guest is still there to
        # ask: address space (Python) or data (Node).
        used = self._launched.memory_use(peak=self.language == "python")
        return at_memory_limit(self.limits.memory_bytes, self.language,
                               ceiling_reached=False, peak=None, used=used)

    # -- binding calls -----------------------------------------------------

    def _on_call(self, call: Call) -> None:
        self._call_count += 1
        if self._replay is not None and self._replay.replaying:
            self._replayed(call)
            return
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

    def _replayed(self, call: Call) -> None:
        assert self._replay is not None
        answer = self._replay.answer(call)
        if isinstance(answer, str):
            self._finish(Ending(Status.ERROR, RunError("ResumeDiverged", answer)))
        else:
            self._send(answer)

    def _suspended(self, call: Call, suspend: Suspend) -> Ending | Result:
        """The run's end for a call that suspends it, or the call's refusal
        when the run was not made suspendable."""
        if self._log is None:
            return Result(id=call.id, error=CallError(
                ErrorCode.BINDING_ERROR, "Suspend",
                f"{call.name}() asked to suspend a run that is not suspendable"))
        checkpoint = Checkpoint(
            source=self.source, language=self.language,
            bindings=[{"name": b.wire.name, "signature": b.wire.signature, "doc": b.wire.doc}
                      for b in self.bindings.values()],
            limits=dataclasses.asdict(self.limits), variables=self.variables,
            last_expression=self.last_expression, calls=self._log.suspended_at(call),
            reason=suspend.reason)
        return Ending(Status.SUSPENDED, RunError("Suspended", suspend.reason),
                      checkpoint=checkpoint.encode())

    def _arguments_size(self, call: Call) -> int:
        """The encoded size of ``[args, kwargs]``, from the CALL's payload
        (deterministic, so the envelope's bytes are known) rather than by
        encoding the arguments again."""
        envelope = len(encode_payload(Call(id=call.id, name=call.name, args=[], kwargs={})
                                      .to_wire()))
        return self._conn.last_payload_size - envelope + 3  # 82, less the empty 80 and a0

    async def _serve(self, call: Call, binding: HostBinding) -> None:
        if self._observer is not None:
            self._observer.call_started(call)
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
        except Suspend as exc:
            suspended = self._suspended(call, exc)
            if isinstance(suspended, Ending):
                self._finish(suspended)
                return
            result = suspended
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
        if self._observer is not None:
            self._observer.call_ended(call, result)
        self._send(result, payload)

    async def _outcome(self, call: Call, binding: HostBinding) -> tuple[Result, bytes | None]:
        args, kwargs = call.args, call.kwargs
        if binding.approval is not None:
            if self._gate is None:
                self._gate = Gate(self._approve, self.limits.approval_timeout, self._clock)
            verdict = await self._gate.review(call, binding.approval)
            if isinstance(verdict, Edit):
                args, kwargs = verdict.args, verdict.kwargs
            elif isinstance(verdict, Suspend):
                raise verdict
            elif verdict is not None:
                return Result(id=call.id, error=verdict), None
        timeout = asyncio.timeout(self.limits.call_timeout) if self.limits.call_timeout else None
        try:
            if timeout is None:
                value = await binding.invoke(args, kwargs, self._binding_threads)
            else:
                async with timeout:
                    value = await binding.invoke(args, kwargs, self._binding_threads)
        except Suspend:
            raise
        except TimeoutError as exc:
            if timeout is None or not timeout.expired():  # the binding's own TimeoutError
                return _binding_error(call.id, exc), None
            return Result(id=call.id, error=CallError(
                ErrorCode.CALL_TIMEOUT, "CallTimeout",
                f"{call.name}() did not finish within {self.limits.call_timeout:g} s")), None
        except Exception as exc:  # the binding's failure is the program's data
            return _binding_error(call.id, exc), None
        if holds_more_items(value, LARGE_ITEMS):  # converting it would hold the loop
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
        value_bytes = self.limits.value_bytes
        # The envelope is RESULT's with a null, less the null (sized only when
        # the value may not fit); its items: the map, id, its key, "value".
        envelope = len(encode_payload(Result(id=call.id).to_wire())) - 1 \
            if len(payload) > value_bytes else 0
        excess = value_excess(payload, value_bytes, envelope_bytes=envelope, envelope_items=4)
        if excess is not None and excess.kind == "bytes":
            return Result(id=call.id, error=CallError(
                ErrorCode.VALUE_TOO_LARGE, "ValueTooLarge",
                f"{call.name}() returned more than {value_bytes} bytes")), None
        if excess is not None:
            return Result(id=call.id, error=CallError(
                ErrorCode.VALUE_TOO_LARGE, "ValueTooLarge",
                f"{call.name}() returned more than {excess.amount} "
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
            checkpoint=ending.checkpoint,
            stats=RunStats(
                sandbox=launched.sandbox_name,
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


@functools.cache
def _own_binding_threads() -> WorkerThreads:
    """Sync bindings of sessions made without a Runtime's pool (the
    conformance runner): a pool of their own, never tether's."""
    return WorkerThreads(8, "tether-binding")


def _binding_error(call_id: int, exc: BaseException) -> Result:
    """Only the exception's class name and text cross: no host traceback (R-RESULT-3)."""
    error = CallError(ErrorCode.BINDING_ERROR, type(exc).__name__, str(exc))
    return Result(id=call_id, error=error)
