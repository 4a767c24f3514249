"""The asyncio driver: runs a program that imports asyncio on an event loop
whose only I/O is fd 3, so its binding calls can run concurrently
(``asyncio.gather``). Imported only for such programs, or ahead of time by a
warm guest: ``import asyncio`` is a large share of a cold start
(figures: bench/README.md).
"""

from __future__ import annotations

import asyncio
import contextlib
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

from . import interrupt
from .channel import Channel, OutputBuffer
from .drivers import BindingError, wire_arguments
from .program import ProgramReturn

#: How long the tasks a program left get to end once cancelled, and its async
#: generators to close, before DONE goes out without them.
CLEANUP_SECONDS = 1.0


def new_loop() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    return loop


class AsyncGuest:
    """One run on an event loop: the program and its concurrent binding calls."""

    def __init__(self, channel: Channel, limits: RunLimits, output: OutputBuffer,
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop  # made before RUN by a warm guest
        self.channel = channel
        self.limits = limits
        self.output = output
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._slots: asyncio.Semaphore | None = None
        # Calls the program stopped waiting for, still in flight on the host:
        # each keeps its slot until its RESULT comes (R-CALL-3).
        self._abandoned: set[int] = set()
        self._main: asyncio.Task[Any] | None = None

    # -- binding calls -----------------------------------------------------

    def make_binding(self, name: str) -> Any:
        async def binding(*args: Any, **kwargs: Any) -> Any:
            return await self.call(name, args, kwargs)

        binding.__name__ = binding.__qualname__ = name
        return binding

    async def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if interrupt.ended():
            raise asyncio.CancelledError  # no CALL after the end of the stream (R-TRANS-4)
        assert self._main is not None and self._slots is not None
        if asyncio.get_running_loop() is not self._main.get_loop():
            # Only the program's loop reads fd 3: awaited anywhere else, the
            # call would wait for a RESULT no one hands over.
            raise RuntimeError(f"{name}() was awaited outside the program's event loop "
                               f"(in another thread's); bindings run on the program's loop")
        wire_args, wire_kwargs = wire_arguments(name, args, kwargs, self.limits)
        await self._slots.acquire()  # R-CALL-3: queue beyond max_calls_in_flight
        self._next_id += 1
        call_id = self._next_id
        future = asyncio.get_running_loop().create_future()
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
                self._slots.release()
        if result.error is not None:
            error = result.error
            raise BindingError(name, error.type, error.message, int(error.code))
        return result.value

    # -- the loop ----------------------------------------------------------

    def on_readable(self) -> None:
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
                        assert self._slots is not None
                        self._slots.release()
                    future = self._pending.get(event.id)
                    if future is not None and not future.done():
                        future.set_result(event)
                elif isinstance(event, Cancel) or event is CONNECTION_CLOSED:
                    interrupt.cancel_read(eof=event is CONNECTION_CLOSED)
                    self._stop()  # R-TRANS-4, R-CANCEL-1
                    if event is CONNECTION_CLOSED:
                        asyncio.get_running_loop().remove_reader(self.channel.read_fd)
                        return
                else:
                    self.channel.fail(
                        ProtocolError(ErrorCode.UNEXPECTED_MESSAGE, f"{type(event).__name__}")
                    )
        except ProtocolError as exc:
            self.channel.fail(exc)

    def _stop(self) -> None:
        if self._main is not None:
            self._main.cancel()

    def main(self, code: Any, namespace: dict[str, Any]) -> Any:
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
        self._slots = asyncio.Semaphore(self.limits.max_calls_in_flight)
        self._main = asyncio.current_task()
        loop.add_reader(self.channel.read_fd, self.on_readable)
        try:
            try:
                # A module's coroutine (top-level await) or none; a function's
                # coroutine gives the program's value.
                awaitable = eval(code, namespace)
                if awaitable is not None:
                    return await awaitable
            except ProgramReturn as ret:
                return ret.value
            finally:
                await _end_the_rest()
        finally:
            loop.remove_reader(self.channel.read_fd)
        return None


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
