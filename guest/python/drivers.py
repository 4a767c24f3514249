"""The blocking driver, and what both drivers share: a program that does
not import asyncio is driven by hand, each binding call blocking on the
channel until its RESULT (guest/python/aio.py is the asyncio driver)."""

from __future__ import annotations

import select
import sys
import weakref
from types import CodeType
from typing import Any

from tether.codec import (
    CONNECTION_CLOSED,
    Call,
    Cancel,
    ErrorCode,
    ProtocolError,
    Result,
    RunLimits,
    Value,
    ValueModelError,
    encode_payload,
    to_wire_plain,
    value_excess,
)

from . import interrupt, script
from .channel import Channel, OutputBuffer
from .interrupt import ProgramCancelled
from .program import ProgramReturn, describe


class BindingError(Exception):
    """A binding call failed on the host (R-RESULT-5). ``type`` names the
    host's error (its exception class for a binding that raised), ``message``
    is the host's text as sent, ``code`` the tether call error code,
    ``binding`` the binding's name; ``str()`` is ``TYPE: MESSAGE``."""

    # A name of the program's globals, as a builtin's: tracebacks show
    # ``BindingError``, not the shim's module path.
    __module__ = "builtins"

    def __init__(self, name: str, type: str, message: str, code: int) -> None:
        super().__init__(f"{type}: {message}" if message else type)
        self.binding = name
        self.type = type
        self.message = message
        self.code = code


# Tracebacks name it as the program sees it, not by the guest's module (R-DONE-2).
BindingError.__module__ = "builtins"


def wire_arguments(name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                   limits: RunLimits) -> tuple[list[Value], dict[str, Value]]:
    """A call's arguments as wire values, or the program's error at the call
    (R-VAL-2, R-CALL-4): nothing is sent for a call that cannot be."""
    wire_args = []
    all_plain = True
    for index, arg in enumerate(args):
        try:
            wire, plain = to_wire_plain(arg, limits.max_depth)
        except ValueModelError as exc:
            raise TypeError(f"{name}() argument {index + 1}: {exc}") from None
        wire_args.append(wire)
        all_plain = all_plain and plain
    wire_kwargs = {}
    for key, arg in kwargs.items():
        try:
            wire_kwargs[key], plain = to_wire_plain(arg, limits.max_depth)
        except ValueModelError as exc:
            raise TypeError(f"{name}() argument {key!r}: {exc}") from None
        all_plain = all_plain and plain
    payload = encode_payload({"": [wire_args, wire_kwargs]}, plain=all_plain)
    excess = value_excess(payload, limits.value_bytes, envelope_bytes=2, envelope_items=2)
    if excess is not None and excess.kind == "bytes":
        raise ValueError(f"{name}() arguments take {excess.amount} bytes, over the limit of "
                         f"{limits.value_bytes} (value_bytes)")
    if excess is not None:
        raise ValueError(f"{name}() arguments hold more than "
                         f"{excess.amount} values (value_bytes / 16)")
    return wire_args, wire_kwargs


def run_plain(code: CodeType, namespace: dict[str, Any]) -> Any:
    """A program that does not await at its top level, run as a script runs:
    its value is what it returns."""
    script.enter(sys._getframe())
    try:
        return eval(code, namespace)  # None for a module, the value for a function
    except ProgramReturn as ret:
        return ret.value


class _CallRequest:
    """What a binding awaits without asyncio: the driver makes the call."""

    def __init__(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.name, self.args, self.kwargs = name, args, kwargs

    def __await__(self) -> Any:
        return (yield self)


class SyncGuest:
    """Runs a program that does not import asyncio: the coroutine is driven by
    hand, and each binding call blocks on fd 3 until its RESULT (calls are
    sequential without asyncio anyway)."""

    def __init__(self, channel: Channel, limits: RunLimits, output: OutputBuffer) -> None:
        self.channel = channel
        self.limits = limits
        self.output = output
        self._next_id = 0
        self._generators: weakref.WeakSet[Any] | None = None  # the program's async generators

    def make_binding(self, name: str) -> Any:
        async def binding(*args: Any, **kwargs: Any) -> Any:
            return await _CallRequest(name, args, kwargs)

        binding.__name__ = binding.__qualname__ = name
        return binding

    def main(self, code: Any, namespace: dict[str, Any], awaits: bool) -> Any:
        if not awaits:
            return run_plain(code, namespace)
        # The program's async generators, closed as asyncio.run closes them
        # (R-DONE-9): those the garbage collector would finalize (an
        # `async for` left by `break`) and those still alive at the end.
        # Closed by the collector itself, one that awaits in its `finally`
        # would fail ("async generator ignored GeneratorExit").
        finalized: list[Any] = []
        hooks = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(firstiter=self._started, finalizer=finalized.append)
        try:
            try:
                return self._drive(eval(code, namespace))  # a module's or a function's coroutine
            except ProgramReturn as ret:
                return ret.value
            finally:
                # None started, none finalized: the finalizer is only ever
                # given a generator the first hook saw.
                if self._generators is not None and not interrupt.cancelled():
                    self._close(finalized, self._generators)
        finally:
            sys.set_asyncgen_hooks(*hooks)

    def _started(self, generator: Any) -> None:
        if self._generators is None:  # made for the first: most programs have none
            self._generators = weakref.WeakSet()
        self._generators.add(generator)

    def _close(self, finalized: list[Any], started: weakref.WeakSet[Any]) -> None:
        while finalized or started:
            generator = finalized.pop(0) if finalized else started.pop()
            started.discard(generator)
            try:
                self._drive(generator.aclose())
            except ProgramCancelled:
                raise
            except Exception as exc:  # reported as asyncio reports it, and the end goes on
                sys.stderr.write(f"an error occurred during closing of asynchronous generator "
                                 f"{generator!r}\n{describe(exc).traceback}")

    def _drive(self, coroutine: Any) -> Any:
        script.enter(sys._getframe())  # the program's coroutine runs from here
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                request = coroutine.send(value) if error is None else coroutine.throw(error)
            except StopIteration as stop:
                return stop.value
            value, error = None, None
            if request is None:  # a bare yield (asyncio's sleep(0)): nothing to wait for,
                error = self._cancelled_meanwhile()  # but the host may have said stop
                continue
            if not isinstance(request, _CallRequest):
                error = RuntimeError("the program awaited something other than a binding "
                                     "call: import asyncio to use asyncio")
                continue
            try:
                value = self._call(request)
            except BaseException as exc:  # raised into the program at its await
                error = exc

    def _cancelled_meanwhile(self) -> BaseException | None:
        """At a bare yield, what a binding call's wait would have read: the
        host's CANCEL (or the end of its stream), raised where the program
        yields (the signal that follows CANCEL may come while this loop,
        not the program, runs)."""
        if interrupt.ended():
            return ProgramCancelled()
        if not select.select([self.channel.read_fd], [], [], 0)[0]:
            return None
        try:
            self._answer(None)  # no call waits: only a CANCEL or the end may come
        except ProgramCancelled as cancelled:
            return cancelled
        return None

    def _call(self, request: _CallRequest) -> Any:
        if interrupt.ended():
            raise ProgramCancelled  # no CALL after the end of the stream (R-TRANS-4)
        wire_args, wire_kwargs = wire_arguments(request.name, request.args, request.kwargs,
                                                self.limits)
        self._next_id += 1
        self.output.flush()
        self.channel.send(Call(id=self._next_id, name=request.name, args=wire_args,
                               kwargs=wire_kwargs))
        result = self._answer(self._next_id)
        interrupt.handover()  # the stream ended behind this answer (R-STDIO-7)
        if result.error is not None:
            raise BindingError(request.name, result.error.type, result.error.message,
                               int(result.error.code))
        return result.value

    def _answer(self, call_id: int | None) -> Result:
        """The host's next frame: the RESULT of call ``call_id``. CANCEL or
        the end of the stream raises the cancellation (R-CANCEL-1,
        R-TRANS-4); anything else breaks the protocol, which is not the
        program's error."""
        try:
            event = self.channel.receive_blocking()
        except ProtocolError as exc:
            self.channel.fail(exc)
        if isinstance(event, Cancel) or event is CONNECTION_CLOSED:
            interrupt.cancel_read(eof=event is CONNECTION_CLOSED)
            interrupt.delivered()
            raise ProgramCancelled
        if not isinstance(event, Result) or event.id != call_id:
            self.channel.fail(ProtocolError(ErrorCode.UNEXPECTED_MESSAGE, repr(event)[:100]))
        return event


def imports_asyncio(code: CodeType) -> bool:
    """Whether the compiled program (or a function in it) names asyncio, as
    ``import asyncio`` does; a mere variable of that name only costs the
    faster path."""
    return any(n == "asyncio" or n.startswith("asyncio.") for n in code.co_names) or any(
        isinstance(const, CodeType) and imports_asyncio(const) for const in code.co_consts)
