"""Worker threads that never hold the process or tether itself up.

tether's own blocking work (joining and removing cgroups, removing work
directories) and the host application's sync bindings run in separate pools,
so bindings stuck in a call cannot delay a run's start or teardown.

``concurrent.futures.ThreadPoolExecutor`` joins its threads when the
interpreter exits, so a single sync binding blocked forever would keep the
process from exiting. These threads are daemons instead: work still running
at exit is abandoned (a thread cannot be killed). A thread with nothing to do
for ``idle_timeout`` seconds exits, so an idle pool holds no thread.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")
_Work = tuple["concurrent.futures.Future[Any]", Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class WorkerThreads(concurrent.futures.Executor):
    """At most ``max_workers`` daemon threads, started on demand."""

    def __init__(self, max_workers: int, name: str, *, idle_timeout: float = 5.0) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self.max_workers = max_workers
        self._name = name
        self._idle_timeout = idle_timeout
        self._queue: queue.SimpleQueue[_Work | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: set[threading.Thread] = set()
        self._numbers = itertools.count(1)
        self._waiting = 0  # threads blocked on the queue
        self._queued = 0  # work items not yet taken
        self._shutdown = False

    def submit(self, fn: Callable[..., _T], /, *args: Any,
               **kwargs: Any) -> concurrent.futures.Future[_T]:
        future: concurrent.futures.Future[_T] = concurrent.futures.Future()
        with self._lock:
            if self._shutdown:
                raise RuntimeError(f"{self._name}: cannot schedule work after shutdown")
            self._queue.put((future, fn, args, kwargs))
            self._queued += 1
            if self._queued > self._waiting and len(self._threads) < self.max_workers:
                thread = threading.Thread(target=self._work, daemon=True,
                                          name=f"{self._name}-{next(self._numbers)}")
                self._threads.add(thread)
                thread.start()
        return future

    def _work(self) -> None:
        me = threading.current_thread()
        while True:
            with self._lock:
                self._waiting += 1
            try:
                work = self._queue.get(timeout=self._idle_timeout)
            except queue.Empty:
                with self._lock:
                    self._waiting -= 1
                    if self._queued == 0:
                        self._threads.discard(me)
                        return
                continue
            with self._lock:
                self._waiting -= 1
                if work is None:
                    self._threads.discard(me)
                    return
                self._queued -= 1
            future, fn, args, kwargs = work
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # the caller's to handle, KeyboardInterrupt included
                future.set_exception(exc)
            else:
                future.set_result(result)
            del work, future, fn, args, kwargs

    @property
    def threads(self) -> int:
        """Threads alive now (busy or idle)."""
        with self._lock:
            return len(self._threads)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Refuse new work and let every thread exit once it is idle; with
        ``wait``, join them (a thread stuck in its work is not waited for:
        it is a daemon and exits when its work ends)."""
        with self._lock:
            self._shutdown = True
            if cancel_futures:
                while True:
                    try:
                        work = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if work is not None:
                        self._queued -= 1
                        work[0].cancel()
            threads = list(self._threads)
            for _ in threads:
                self._queue.put(None)
        if wait:
            deadline = time.monotonic() + 1.0
            for thread in threads:
                if thread is not threading.current_thread():
                    thread.join(timeout=max(0.0, deadline - time.monotonic()))


#: tether's own blocking work: cgroups, work directories (see process.in_thread).
internal = WorkerThreads(8, "tether")
