"""Serving a run's binding calls: each CALL refused or handed to its
binding (after its approval, if it needs one), and answered by one RESULT.

The session gives every CALL to :meth:`BindingCalls.call`; this module
checks it against the run's limits, answers a resumed run's calls from its
log, runs the binding (a sync one in a worker thread), converts and sizes
its value, and tells the observers. A call that suspends the run, or a
binding that raises KeyboardInterrupt or SystemExit, ends the run through
``finish``.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Callable, Coroutine
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from tether.codec import (
    Call,
    CallError,
    Connection,
    ErrorCode,
    Message,
    Payload,
    Result,
    ValueModelError,
    encode_payload,
    encode_payload_in_steps,
    encode_payload_parts,
    holds_more_items,
    payload_size,
    to_wire_plain,
    value_excess,
)

from ..aio.reader import between_steps, decoding, paced
from ..aio.threads import WorkerThreads
from ..bindings.prepared import HostBinding
from ..limits import Limits
from ..result import RunError, Status
from .approvals import ApproveHook, Clock, Edit, Gate
from .checkpoints import CheckpointError, Suspend
from .endings import Ending, cancelled
from .events import Observer
from .replay import CallLog, Replay
from .request import RunRequest

#: A binding's result holding more items than this is converted and encoded
#: off the event loop.
LARGE_ITEMS = 4096



@dataclass(frozen=True, slots=True)
class Serving:
    """How a run's binding calls are served, handed by the Runtime through
    the session to its calls as one value: ``threads`` run sync bindings
    (None: a pool of their own); ``observer`` is told about the run's output
    and each call as they happen; ``approve`` answers the calls whose
    binding requires approval; ``log`` makes the run suspendable; ``replay``
    answers a resumed run's calls up to its suspension point."""

    threads: Executor | None = None
    observer: Observer | None = None
    approve: ApproveHook | None = None
    log: CallLog | None = None
    replay: Replay | None = None


class BindingCalls:
    """The binding calls of one run, on its connection ``conn``.

    ``request`` is what the run was asked to do (its bindings, its limits,
    the checkpoint that saves it); ``send(message, payload)`` sends a frame
    (``payload``: its encoded envelope, when known); ``finish(ending)`` ends
    the run; ``clock`` is paused while an approval waits; ``serving`` says
    how the calls are served."""

    def __init__(
        self,
        request: RunRequest,
        conn: Connection,
        *,
        send: Callable[[Message, Payload | None], None],
        finish: Callable[[Ending], None],
        clock: Clock,
        serving: Serving,
    ) -> None:
        self._bindings = request.bindings
        self._limits = request.limits
        self._conn = conn
        self._send = send
        self._finish = finish
        self._checkpoint = request.checkpoint
        self._clock = clock
        self._threads = serving.threads or _own_binding_threads()
        self._observer = serving.observer
        self._approve = serving.approve
        self._gate: Gate | None = None
        self._log = serving.log
        self._replay = serving.replay
        self._in_flight: dict[int, asyncio.Task[None]] = {}
        #: The CALL frames the program sent.
        self.count = 0
        #: A KeyboardInterrupt or SystemExit a binding raised: the run ends,
        #: and the session raises it once everything is cleaned up.
        self.host_exit: BaseException | None = None

    @property
    def replaying(self) -> bool:
        """Whether a resumed run is still before its suspension point."""
        return self._replay is not None and self._replay.replaying

    def call(self, call: Call) -> None:
        self.count += 1
        if self.replaying and self._replayed(call):
            return
        binding = self._bindings.get(call.name)
        refusal = self._refusal(call, binding)
        if refusal is not None or binding is None:
            self._send(Result(id=call.id, error=refusal), None)
            return
        task = _start_task(self._serve(call, binding, self._conn.last_payload_size))
        if not task.done():
            self._in_flight[call.id] = task

    def cancel(self) -> list[asyncio.Task[None]]:
        """Cancel the calls in flight (R-TERM-3); the tasks, to wait for."""
        calls = list(self._in_flight.values())
        for task in calls:
            task.cancel()
        return calls

    def _refusal(self, call: Call, binding: HostBinding | None) -> CallError | None:
        limits = self._limits
        if binding is None:
            return CallError(ErrorCode.UNKNOWN_BINDING, "NameError",
                             f"no binding named {call.name!r}")
        if len(self._conn.calls_in_flight) > limits.max_calls_in_flight:
            # The codec counts this CALL already; a call leaves the count when
            # its RESULT is sent, as the guest sees it (R-CALL-3).
            return CallError(ErrorCode.TOO_MANY_CALLS, "TooManyCalls",
                             f"over max_calls_in_flight ({limits.max_calls_in_flight})")
        if (self._conn.last_payload_size > limits.value_bytes  # else it surely fits
                and self._arguments_size(call) > limits.value_bytes):
            return CallError(ErrorCode.VALUE_TOO_LARGE, "ValueTooLarge",
                             f"arguments exceed {limits.value_bytes} bytes")
        return None

    def ended_early(self, how: str) -> str:
        """Why a resumed run that ended (``how``) while :attr:`replaying`
        diverged."""
        assert self._replay is not None
        return self._replay.ended_early(how)

    def _replayed(self, call: Call) -> bool:
        """Answer ``call`` from the log; False when it is to run live."""
        assert self._replay is not None
        answer = self._replay.answer(call)
        if answer is None:
            return False
        if isinstance(answer, str):
            self._finish(Ending(Status.ERROR, RunError("ResumeDiverged", answer)))
        else:
            self._send(answer, None)
        return True

    async def _suspended(self, call: Call, suspend: Suspend) -> Ending | Result:
        """The run's end for a call that suspends it, or the call's refusal
        when the run was not made suspendable or cannot be saved (its log
        or its checkpoint passed ``Limits.checkpoint_bytes``)."""
        if self._log is None:
            return _refused_suspension(
                call, f"{call.name}() asked to suspend a run that is not suspendable")
        if self._log.full:
            return _refused_suspension(
                call, f"{call.name}() asked to suspend a run whose call log passed "
                      f"Limits.checkpoint_bytes ({self._log.max_bytes} bytes): it can no "
                      "longer be suspended")
        try:
            checkpoint = await self._checkpoint(self._log.suspended_at(call), suspend.reason)
        except CheckpointError as exc:
            return _refused_suspension(call, f"{call.name}() asked to suspend the run: {exc}")
        return Ending(Status.SUSPENDED, RunError("Suspended", suspend.reason),
                      checkpoint=checkpoint)

    def _arguments_size(self, call: Call) -> int:
        """The encoded size of ``[args, kwargs]``, from the CALL's payload
        (deterministic, so the envelope's bytes are known) rather than by
        encoding the arguments again."""
        envelope = len(encode_payload(Call(id=call.id, name=call.name, args=[], kwargs={})
                                      .to_wire()))
        return self._conn.last_payload_size - envelope + 3  # 82, less the empty 80 and a0

    async def _serve(self, call: Call, binding: HostBinding, size: int) -> None:
        """``size``: the bytes of the CALL's payload."""
        if self._observer is not None:
            self._observer.call_started(call, size)
        try:
            await self._answer(call, binding)
        finally:
            self._in_flight.pop(call.id, None)

    async def _answer(self, call: Call, binding: HostBinding) -> None:
        """Every outcome of a binding answers its call. A KeyboardInterrupt
        or SystemExit (meant for the host process) also ends the run, and
        reaches run()'s caller after the cleanup; a cancellation by the host
        (the run is ending) is the only outcome that sends nothing."""
        payload = None
        try:
            result, payload = await self._outcome(call, binding)
        except Suspend as exc:
            suspended = await self._suspended(call, exc)
            if isinstance(suspended, Ending):
                self._finish(suspended)
                return
            result = suspended
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # the host cancels the call: the run is ending (R-TERM-3)
            result = binding_error(call.id, exc)  # the binding's own cancellation
        except (KeyboardInterrupt, SystemExit) as exc:
            self._send(Result(id=call.id, error=CallError(
                ErrorCode.BINDING_ERROR, type(exc).__name__, "the host is stopping")), None)
            self.host_exit = exc
            self._finish(cancelled(f"the host is stopping: {call.name}() raised "
                                   f"{type(exc).__name__}"))
            return
        except BaseException as exc:  # GeneratorExit, BaseException subclasses
            result = binding_error(call.id, exc)
        if result.error is not None:  # whatever raised it, it fits and is valid text
            result = Result(id=result.id, error=result.error.fitted(self._limits.value_bytes))
        if self._observer is not None:
            if payload is None:  # an error, or a refusal: small once fitted
                payload = encode_payload(result.to_wire())
            self._observer.call_ended(call, result, payload_size(payload))
        self._send(result, payload)

    async def _outcome(self, call: Call, binding: HostBinding) -> tuple[Result, Payload | None]:
        args, kwargs = call.args, call.kwargs
        limits = self._limits
        if binding.approval is not None:
            if self._gate is None:
                self._gate = Gate(self._approve, limits.approval_timeout, self._clock)
            verdict = await self._gate.review(call, binding.approval)
            if isinstance(verdict, Edit):
                args, kwargs = verdict.args, verdict.kwargs
            elif isinstance(verdict, Suspend):
                raise verdict
            elif verdict is not None:
                return Result(id=call.id, error=verdict), None
        timeout = asyncio.timeout(limits.call_timeout) if limits.call_timeout else None
        try:
            if timeout is None:
                value = await binding.invoke(args, kwargs, self._threads)
            else:
                async with timeout:
                    value = await binding.invoke(args, kwargs, self._threads)
        except Suspend:
            raise
        except TimeoutError as exc:
            if timeout is None or not timeout.expired():  # the binding's own TimeoutError
                return binding_error(call.id, exc), None
            return Result(id=call.id, error=CallError(
                ErrorCode.CALL_TIMEOUT, "CallTimeout",
                f"{call.name}() did not finish within {limits.call_timeout:g} s")), None
        except Exception as exc:  # the binding's failure is the program's data
            return binding_error(call.id, exc), None
        if holds_more_items(value, LARGE_ITEMS):  # converting it would hold the loop
            return await paced(decoding, functools.partial(
                result_for, call, value, limits, in_steps=True))
        return result_for(call, value, limits)


def result_for(call: Call, value: Any, limits: Limits, *,
               in_steps: bool = False) -> tuple[Result, Payload | None]:
    """The RESULT for a binding's return value, and its payload when it is
    a value (encoded once: to size it and to send it; ``in_steps`` in
    the decoding thread, handing the interpreter over between steps)."""
    try:
        wire, plain = to_wire_plain(value, limits.max_depth)
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
    payload: Payload
    if in_steps:
        payload = encode_payload_in_steps(result.to_wire(), plain=plain,
                                          between_steps=between_steps)
    else:
        payload = encode_payload_parts(result.to_wire(), plain=plain)
    value_bytes = limits.value_bytes
    # The envelope is RESULT's with a null, less the null (sized only when
    # the value may not fit); its items: the map, id, its key, "value".
    envelope = len(encode_payload(Result(id=call.id).to_wire())) - 1 \
        if payload_size(payload) > value_bytes else 0
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


def _refused_suspension(call: Call, why: str) -> Result:
    return Result(id=call.id, error=CallError(ErrorCode.BINDING_ERROR, "Suspend", why))


def binding_error(call_id: int, exc: BaseException) -> Result:
    """Only the exception's class name and text cross: no host traceback
    (R-RESULT-3); the error is fitted before it is sent (R-RESULT-6)."""
    error = CallError(ErrorCode.BINDING_ERROR, type(exc).__name__, str(exc))
    return Result(id=call_id, error=error)


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
    """Sync bindings of runs made without a Runtime's pool (the
    conformance runner): a pool of their own, never tether's."""
    return WorkerThreads(8, "tether-binding")
