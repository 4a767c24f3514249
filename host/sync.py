"""The blocking API: a Runtime on an event loop of its own, in a thread."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

from .aio.tasks import HostExit, carrying_exits, unwrapped
from .result import RunResult
from .runtime import RunSession, Runtime

_T = TypeVar("_T")
_P = ParamSpec("_P")
_S = TypeVar("_S")
_R = TypeVar("_R")


def _same_parameters(model: Callable[Concatenate[Any, _P], object]) -> Callable[
        [Callable[Concatenate[_S, ...], _R]], Callable[Concatenate[_S, _P], _R]]:
    """A method that takes the parameters of ``model`` (a method of the
    async API), for type checkers and for ``help()``, and returns what it
    says: the blocking API is not a copy of the async one to keep in step."""
    def take(method: Callable[Concatenate[_S, ...], _R]) -> Callable[Concatenate[_S, _P], _R]:
        method.__signature__ = inspect.signature(model).replace(  # type: ignore[attr-defined]
            return_annotation=inspect.signature(method).return_annotation)
        return method
    return take


class SyncRuntime:
    """A :class:`Runtime` for callers that are not async: scripts,
    notebooks, frameworks that call their executor synchronously.

    It takes the Runtime's arguments and owns an event loop in a daemon
    thread of its own, where the Runtime lives; :meth:`run` takes the same
    arguments as ``Runtime.run`` and blocks until the result. It is safe to
    call from several threads at once (their runs go on side by side).
    Close it, or use it as a context manager::

        with SyncRuntime() as rt:
            result = rt.run("return 1 + 1")

    Bindings may be sync or async functions; async ones run on the
    SyncRuntime's loop, not the caller's. A call interrupted by Ctrl-C
    (KeyboardInterrupt in the caller's thread) ends its run, guest and all,
    before the interrupt goes on; an interrupted :meth:`close` finishes first.
    """

    @_same_parameters(Runtime.__init__)
    def __init__(self, **options: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever,
                                        name="tether-sync-runtime", daemon=True)
        self._thread.start()
        self._closed = False
        self._lock = threading.Lock()

        async def make() -> Runtime:
            runtime = Runtime(**options)
            await runtime.__aenter__()
            return runtime

        try:
            self.runtime = self._call(make())
        except BaseException:
            self._stop_loop()
            raise

    def _call(self, coro: Coroutine[Any, Any, _T], *, interruptible: bool = True) -> _T:
        """``coro``'s result, run on the loop. If the caller is interrupted
        meanwhile (KeyboardInterrupt in its thread), the work is cancelled
        (unless not ``interruptible``) and waited for before the interrupt
        goes on: a run's guest is gone by then, and a close has finished. A
        KeyboardInterrupt or SystemExit that a binding raised is raised here,
        in the caller's thread, after its run's cleanup; the loop goes on."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("a SyncRuntime cannot be used from its own loop "
                               "(from an async binding): await Runtime.run there")
        ended = threading.Event()
        tasks: list[asyncio.Task[_T | HostExit]] = []

        def start() -> None:
            task = self._loop.create_task(carrying_exits(coro))
            task.add_done_callback(lambda _: ended.set())
            tasks.append(task)

        def cancel() -> None:  # after start(): the loop runs its callbacks in order
            tasks[0].cancel()

        self._loop.call_soon_threadsafe(start)
        try:
            ended.wait()
        except BaseException:
            if interruptible:
                self._loop.call_soon_threadsafe(cancel)
            ended.wait()
            raise
        return unwrapped(tasks[0].result())

    @_same_parameters(Runtime.run)
    def run(self, *args: Any, **options: Any) -> RunResult:
        """``Runtime.run``, blocking: the same arguments, result and errors
        (``on_event`` is called in the SyncRuntime's thread)."""
        with self._lock:
            if self._closed:
                raise RuntimeError("this SyncRuntime is closed")
        return self._call(self.runtime.run(*args, **options))

    @_same_parameters(Runtime.resume)
    def resume(self, *args: Any, **options: Any) -> RunResult:
        """``Runtime.resume``, blocking."""
        with self._lock:
            if self._closed:
                raise RuntimeError("this SyncRuntime is closed")
        return self._call(self.runtime.resume(*args, **options))

    @_same_parameters(Runtime.session)
    def session(self, *args: Any, **options: Any) -> SyncRunSession:
        """``Runtime.session``, blocking: a :class:`SyncRunSession`."""
        return SyncRunSession(self, self.runtime.session(*args, **options))

    def close(self) -> None:
        """End runs still going (status ``cancelled``), stop the warm guests
        and the loop's thread. Calling it again does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._call(self.runtime.aclose(), interruptible=False)
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def __enter__(self) -> SyncRuntime:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class SyncRunSession:
    """A :class:`RunSession` for blocking callers, made by
    :meth:`SyncRuntime.session`: ``run()`` blocks; ``variables``, ``results``
    and ``save()`` are the session's."""

    def __init__(self, runtime: SyncRuntime, session: RunSession) -> None:
        self._runtime = runtime
        self._session = session

    @property
    def variables(self) -> dict[str, Any]:
        """The variables the next run starts with."""
        return self._session.variables

    @property
    def results(self) -> list[RunResult]:
        """Every run's result, in order."""
        return self._session.results

    @_same_parameters(RunSession.run)
    def run(self, *args: Any, **options: Any) -> RunResult:
        """``RunSession.run``, blocking."""
        return self._runtime._call(self._session.run(*args, **options))

    def save(self) -> dict[str, Any]:
        """The variables as plain data (``RunSession.save``)."""
        return self._session.save()

    def __enter__(self) -> SyncRunSession:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        return None
