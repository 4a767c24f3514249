"""The asyncio driver: binding calls of a program that imports asyncio, on
event loops whose only I/O is fd 3, so they can run concurrently
(``asyncio.gather``). Imported only for such programs, or ahead of time by a
warm guest: ``import asyncio`` is a large share of a cold start
(figures: bench/README.md).

A program that awaits at its top level runs on the guest's own loop. One
that does not runs as a script does, and starts its loops itself
(``asyncio.run(main())``, ``loop.run_until_complete``): its calls are then
read on whichever loop of the main thread awaits them.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections import deque
from typing import Any

from tether.codec import (
    CONNECTION_CLOSED,
    NEED_DATA,
    Call,
    Cancel,
    ErrorCode,
    ProtocolError,
    Result,
    RunLimits,
)

from . import interrupt, script
from .channel import Channel, OutputBuffer
from .drivers import BindingError, run_plain, wire_arguments
from .program import ProgramReturn

#: How long the tasks a program left get to end once cancelled, and its async
#: generators to close, before DONE goes out without them.
CLEANUP_SECONDS = 1.0


#: What asyncio raises where a loop is started from a running one.
_ANOTHER_LOOP = frozenset({
    "asyncio.run() cannot be called from a running event loop",
    "Runner.run() cannot be called from a running event loop",
    "Cannot run the event loop while another loop is running",
    "This event loop is already running"})


def new_loop() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    return loop


class AsyncGuest:
    """One run's binding calls, on the loops of the program's main thread,
    and the program itself on the guest's loop when it awaits at its top
    level."""

    def __init__(self, channel: Channel, limits: RunLimits, output: OutputBuffer,
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop  # made before RUN by a warm guest
        self.channel = channel
        self.limits = limits
        self.output = output
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        # R-CALL-3: calls holding a slot, and those queued for one, in order.
        # Not an asyncio.Semaphore: that belongs to one loop, and a program
        # may run several one after another (asyncio.run twice).
        self._in_flight = 0
        self._queued: deque[asyncio.Future[None]] = deque()
        # Calls the program stopped waiting for, still in flight on the host:
        # each keeps its slot until its RESULT comes (R-CALL-3).
        self._abandoned: set[int] = set()
        self._main: asyncio.Task[Any] | None = None  # the program, on the guest's loop
        self._reading: asyncio.AbstractEventLoop | None = None  # the loop that reads fd 3
        self._thread = threading.get_ident()  # whose loops may read fd 3

    # -- binding calls -----------------------------------------------------

    def make_binding(self, name: str) -> Any:
        async def binding(*args: Any, **kwargs: Any) -> Any:
            return await self.call(name, args, kwargs)

        binding.__name__ = binding.__qualname__ = name
        return binding

    async def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if interrupt.ended():
            raise asyncio.CancelledError  # no CALL after the end of the stream (R-TRANS-4)
        loop = asyncio.get_running_loop()
        if threading.get_ident() != self._thread:
            # fd 3 is read on the main thread: awaited on another thread's
            # loop, the call would wait for a RESULT no one hands over.
            raise RuntimeError(f"{name}() was awaited on an event loop of another thread; "
                               f"bindings run on the event loops of the program's main thread")
        self._read_on(loop)
        wire_args, wire_kwargs = wire_arguments(name, args, kwargs, self.limits)
        await self._acquire(loop)  # R-CALL-3: queue beyond max_calls_in_flight
        self._next_id += 1
        call_id = self._next_id
        future = loop.create_future()
        self._pending[call_id] = future
        in_flight = False
        try:
            self.output.flush()
            self.channel.send(Call(id=call_id, name=name, args=wire_args, kwargs=wire_kwargs))
            in_flight = True
            result: Result = await future
            in_flight = False
        finally:
            self._pending.pop(call_id, None)
            if in_flight:  # the program stopped waiting: its RESULT frees the slot
                self._abandoned.add(call_id)
            else:
                self._release()
        if result.error is not None:
            error = result.error
            raise BindingError(name, error.type, error.message, int(error.code))
        return result.value

    async def _acquire(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._in_flight < self.limits.max_calls_in_flight and not self._queued:
            self._in_flight += 1
            return
        waiter = loop.create_future()
        self._queued.append(waiter)
        try:
            await waiter  # _release hands its slot over
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self._release()  # handed a slot as it was cancelled: pass it on
            else:
                with contextlib.suppress(ValueError):
                    self._queued.remove(waiter)
            raise

    def _release(self) -> None:
        while self._queued:
            waiter = self._queued.popleft()
            if not waiter.done() and not waiter.get_loop().is_closed():
                waiter.set_result(None)
                return
        self._in_flight -= 1

    # -- the loops ---------------------------------------------------------

    def _read_on(self, loop: asyncio.AbstractEventLoop) -> None:
        """fd 3 is read by ``loop`` from now on (the loop that awaits a call)."""
        if loop is self._reading:
            return
        if self._reading is not None and not self._reading.is_closed():
            self._reading.remove_reader(self.channel.read_fd)
        loop.add_reader(self.channel.read_fd, self.on_readable)
        self._reading = loop

    def on_readable(self) -> None:
        interrupt.read_begins()
        try:
            self._read()
        finally:
            interrupt.read_ends()

    def _read(self) -> None:
        conn = self.channel.conn
        try:
            self.channel.receive()
        except BlockingIOError:
            return
        except OSError:
            conn.receive_eof()
        try:
            while (event := conn.next_event()) is not NEED_DATA:
                if isinstance(event, Result):
                    if event.id in self._abandoned:
                        self._abandoned.discard(event.id)
                        self._release()
                    future = self._pending.get(event.id)
                    if future is not None and not future.done():
                        future.set_result(event)
                elif isinstance(event, Cancel) or event is CONNECTION_CLOSED:
                    interrupt.cancel_read(eof=event is CONNECTION_CLOSED)
                    self._stop()  # R-TRANS-4, R-CANCEL-1
                    if event is CONNECTION_CLOSED:
                        asyncio.get_running_loop().remove_reader(self.channel.read_fd)
                        self._reading = None
                        return
                else:
                    self.channel.fail(
                        ProtocolError(ErrorCode.UNEXPECTED_MESSAGE, f"{type(event).__name__}")
                    )
        except ProtocolError as exc:
            self.channel.fail(exc)

    def _stop(self) -> None:
        """R-CANCEL-2: on the guest's loop the program's task is cancelled;
        on the program's own, each call it waits on."""
        if self._main is not None:
            self._main.cancel()
            interrupt.delivered()
            return
        waiting = [*self._pending.values(), *self._queued]
        for future in waiting:
            future.cancel()
        if waiting:
            interrupt.delivered(raised="asyncio.exceptions.CancelledError")

    def main(self, code: Any, namespace: dict[str, Any], awaits: bool) -> Any:
        if not awaits:
            # As plain CPython: no loop has been made or set for the program.
            asyncio.set_event_loop_policy(None)
            return run_plain(code, namespace)
        loop = self._loop or new_loop()
        try:
            return loop.run_until_complete(self._main_task(code, namespace))
        except (SystemExit, KeyboardInterrupt):
            # Raised in a task, it left the loop at once; as asyncio.run then
            # does, the program's task is cancelled, so its own end cleans up
            # the tasks it left (R-DONE-9), and the exit goes on.
            if self._main is not None and not self._main.done():
                self._main.cancel()
                loop.run_until_complete(asyncio.gather(self._main, return_exceptions=True))
            raise

    async def _main_task(self, code: Any, namespace: dict[str, Any]) -> Any:
        loop = asyncio.get_running_loop()
        self._main = asyncio.current_task()
        self._read_on(loop)
        script.enter(sys._getframe(), from_c=1)  # this task's frame is called from C
        try:
            try:
                # A module's coroutine gives None, a function's the program's value.
                return await eval(code, namespace)
            except ProgramReturn as ret:
                return ret.value
            except RuntimeError as exc:
                if str(exc) in _ANOTHER_LOOP:  # R-RUN-8: what to write instead
                    exc.add_note("This program awaits at its top level, so it runs on an "
                                 "event loop already: write `await main()` instead of "
                                 "`asyncio.run(main())`.")
                raise
            finally:
                await _end_the_rest()
        finally:
            if self._reading is loop:
                loop.remove_reader(self.channel.read_fd)
                self._reading = None


async def _end_the_rest() -> None:
    """What asyncio.run does as its main coroutine ends, before DONE: the
    tasks the program left are cancelled and awaited (their ``finally``
    clauses run, binding calls included), its async generators closed. They
    get CLEANUP_SECONDS: a task that swallows its cancellation (a retry loop
    under a bare ``except``) cannot hold the program's result, as it would
    hold asyncio.run. When the host cancelled the run, they are cancelled
    and not waited for: the host's grace is for DONE."""
    loop = asyncio.get_running_loop()
    # Cancelled by the host, no await at all: one more cancel there would
    # hide where the program was.
    waits = not interrupt.cancelled()
    if waits:
        await asyncio.sleep(0)  # an async generator dropped just now: its aclose becomes a task
    tasks = asyncio.all_tasks() - {asyncio.current_task()}
    for task in tasks:
        task.cancel()
    if not waits:
        return
    if tasks:
        done, _ = await asyncio.wait(tasks, timeout=CLEANUP_SECONDS)
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                loop.call_exception_handler({
                    "message": "unhandled exception in a task left running as the program ended",
                    "exception": task.exception(), "task": task})
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(loop.shutdown_asyncgens(), CLEANUP_SECONDS)
