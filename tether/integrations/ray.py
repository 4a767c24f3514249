"""Many programs over a Ray cluster (the ``ray`` extra).

Each Ray worker is an actor that holds one :class:`tether.Runtime` (with its
warm pool and sandbox) for its whole life; :meth:`RayRunner.run_many` spreads
the runs over the workers, a few in flight on each, and returns one
:class:`tether.RunResult` per run, in order. A run whose worker dies comes
back as a ``crashed`` result, never lost; the worker is restarted for the
runs after it (up to ``max_restarts``). A job that ``Runtime.run`` refuses
(a variable outside the value model, an unknown language) comes back as an
``error`` result with the exception's type and message; the batch goes on.

Bindings come two ways:

- ``bindings``: ``{name: "module:attr"}``, imported on each worker, so a call
  costs what it costs locally. The module must be importable there.
- ``served``: ``{name: callable}``, kept by one actor that every worker calls
  back (state shared across the batch: a cache, a rate limit, one client);
  each call then also costs a Ray round trip, and that actor is a single
  queue for the whole cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import ray
from ray.exceptions import RayActorError, RayTaskError

from tether.host import Limits, RunError, RunResult, Runtime, Status

__all__ = ["RayRunner", "RunJob"]

#: Actor handles are untyped here: their methods are called by name.
_remote: Any = ray.remote


@dataclass(frozen=True)
class RunJob:
    """One program to run, with :meth:`tether.Runtime.run`'s arguments."""

    source: str
    language: str = "python"
    limits: Limits | None = None
    variables: Mapping[str, Any] | None = None
    last_expression: bool = False
    #: Extra keyword arguments of Runtime.run (``sandbox``, ``check``).
    options: Mapping[str, Any] = field(default_factory=dict)


def _import(reference: str) -> Callable[..., Any]:
    module, _, attr = reference.partition(":")
    if not module or not attr:
        raise ValueError(f"a binding by name is 'module:attr', not {reference!r}")
    target: Any = importlib.import_module(module)
    for part in attr.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"{reference} is not callable")
    return target  # type: ignore[no-any-return]


class _Served:
    """The actor that runs the driver-served bindings for every worker."""

    def __init__(self, functions: Mapping[str, Callable[..., Any]]) -> None:
        self._functions = dict(functions)

    async def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        function = self._functions[name]
        try:
            if inspect.iscoroutinefunction(function):
                return ("ok", await function(*args, **kwargs))
            return ("ok", await asyncio.to_thread(function, *args, **kwargs))
        except Exception as exc:  # raised again on the worker, in the program
            return ("error", exc)


def _calling_back(server: Any, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """An async binding that runs ``original`` on the server, described (and
    its arguments checked) as ``original`` is."""
    @functools.wraps(original)
    async def call(*args: Any, **kwargs: Any) -> Any:
        outcome, value = await server.call.remote(name, args, kwargs)
        if outcome == "error":
            raise value
        return value
    return call


class _Worker:
    """A Ray actor holding one Runtime; runs come in as RunJobs."""

    def __init__(self, runtime: Mapping[str, Any], bindings: Mapping[str, str],
                 served: Mapping[str, Callable[..., Any]], server: Any) -> None:
        self._options = dict(runtime)
        self._bindings: dict[str, Callable[..., Any]] = {
            name: _import(reference) for name, reference in bindings.items()}
        for name, original in served.items():
            self._bindings[name] = _calling_back(server, name, original)
        self._runtime: Runtime | None = None

    async def run(self, job: RunJob) -> RunResult:
        if self._runtime is None:  # made on the actor's own event loop
            self._runtime = Runtime(**self._options)
        try:
            return await self._runtime.run(
                job.source, language=job.language, bindings=self._bindings, limits=job.limits,
                variables=job.variables, last_expression=job.last_expression, **job.options)
        except Exception as exc:  # the job's arguments refused: its result, not the batch's end
            return _refused(exc)

    async def close(self) -> None:
        if self._runtime is not None:
            await self._runtime.aclose()
            self._runtime = None


def _refused(exc: BaseException) -> RunResult:
    """The result of a job whose run raised (its arguments refused)."""
    return RunResult(Status.ERROR, error=RunError(type(exc).__name__, str(exc)))


def _lost(exc: BaseException) -> RunResult:
    return RunResult(Status.CRASHED, error=RunError(
        "GuestCrashed", f"the Ray worker running it died: {type(exc).__name__}"))


class RayRunner:
    """``workers`` Ray actors, each with a Runtime made from ``runtime``
    (Runtime's keyword arguments); ``concurrency`` runs in flight on each.
    ``num_cpus``: what each worker reserves in the cluster. Uses the Ray
    cluster the process is connected to (``ray.init()`` first)."""

    def __init__(self, workers: int = 2, *, runtime: Mapping[str, Any] | None = None,
                 bindings: Mapping[str, str] | None = None,
                 served: Mapping[str, Callable[..., Any]] | None = None,
                 concurrency: int = 2, num_cpus: float = 1, max_restarts: int = 3) -> None:
        if workers < 1 or concurrency < 1:
            raise ValueError("workers and concurrency must be at least 1")
        if not ray.is_initialized():
            raise RuntimeError("connect to a Ray cluster first: ray.init()")
        served = dict(served or {})
        self._server: Any = _remote(num_cpus=0)(_Served).remote(served) if served else None
        actor = _remote(num_cpus=num_cpus, max_restarts=max_restarts,
                           max_concurrency=concurrency + 1)(_Worker)
        self._workers: list[Any] = [actor.remote(dict(runtime or {}), dict(bindings or {}), served,
                                      self._server) for _ in range(workers)]
        self._concurrency = concurrency

    def run_many(self, jobs: Iterable[RunJob | str]) -> list[RunResult]:
        """Run every job (a bare string: a Python program); one result each,
        in the order given. Never raises for what a program or a worker did;
        a job whose arguments ``Runtime.run`` refuses (ValueError,
        TypeError) is an ``error`` result with the exception's type and
        message, and the other jobs run."""
        queue = [job if isinstance(job, RunJob) else RunJob(job) for job in jobs]
        results: list[RunResult | None] = [None] * len(queue)
        alive = list(range(len(self._workers)))
        load = dict.fromkeys(alive, 0)
        pending: dict[Any, tuple[int, int]] = {}  # ref -> (job index, worker)
        next_job = 0
        while next_job < len(queue) or pending:
            for worker in alive:
                while load[worker] < self._concurrency and next_job < len(queue):
                    ref = self._workers[worker].run.remote(queue[next_job])
                    pending[ref] = (next_job, worker)
                    load[worker] += 1
                    next_job += 1
            if not pending:  # every worker is gone for good
                for index in range(next_job, len(queue)):
                    results[index] = _lost(RuntimeError("no Ray worker is left"))
                break
            [done], _ = ray.wait(list(pending), num_returns=1)
            index, worker = pending.pop(done)
            load[worker] -= 1
            try:
                results[index] = ray.get(done)
            except RayActorError as exc:
                results[index] = _lost(exc)
                if not _restarts(self._workers[worker]):
                    alive = [w for w in alive if w != worker]
            except RayTaskError as exc:  # the worker's run raised: that job's error
                results[index] = _refused(exc.cause if exc.cause is not None else exc)
        return [result if result is not None else _lost(RuntimeError("not run"))
                for result in results]

    def close(self) -> None:
        """Close every worker's Runtime, then end the actors."""
        for worker in self._workers:
            with contextlib.suppress(Exception):  # a dead worker has nothing left to close
                ray.get(worker.close.remote(), timeout=30)
            ray.kill(worker)
        if self._server is not None:
            ray.kill(self._server)

    def __enter__(self) -> RayRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _restarts(worker: Any) -> bool:
    """Whether a worker whose run failed will take more (it is restarting)."""
    try:
        ray.get(worker.__ray_ready__.remote(), timeout=60)
        return True
    except Exception:  # dead for good, or not back in time
        return False


