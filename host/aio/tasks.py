"""Background tasks the host keeps until they end (a guest's start, a run's
teardown), so that closing waits for them rather than leaves them behind;
and a task's way to hand the host's exits to whoever awaits it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Coroutine
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

logger = logging.getLogger("tether")

T = TypeVar("T")


class Tasks(Generic[T]):
    """A set of tasks, each kept until it ends. ``failure`` names what they
    do in the warning :meth:`all_done` logs for one that raised; None: their
    outcome is read by whoever awaits them."""

    def __init__(self, failure: str | None = None) -> None:
        self._tasks: set[asyncio.Task[T]] = set()
        self._failure = failure

    def spawn(self, work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """``work`` as a task kept here until it ends."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def __len__(self) -> int:
        return len(self._tasks)

    def cancel(self) -> None:
        for task in self._tasks:
            task.cancel()

    async def all_done(self) -> None:
        """Until every task has ended, those added meanwhile too. Cancelling
        the caller cancels none of them: a close waits for cleanups, it does
        not cut them short."""
        while self._tasks:
            done, _ = await asyncio.wait(set(self._tasks))
            for task in done:
                if self._failure is not None and not task.cancelled() \
                        and task.exception() is not None:
                    logger.warning("tether: %s failed: %r", self._failure, task.exception())


@dataclass(frozen=True, slots=True)
class HostExit:
    """A KeyboardInterrupt or SystemExit that work in a task raised."""

    exception: KeyboardInterrupt | SystemExit


async def carrying_exits(work: Awaitable[T]) -> T | HostExit:
    """``work``'s result, or the KeyboardInterrupt or SystemExit it raised
    (a binding may), returned rather than raised: asyncio raises either out
    of the event loop from the task it ends, which stops the loop of
    whoever runs it; :func:`unwrapped` raises it in the awaiting caller."""
    try:
        return await work
    except (KeyboardInterrupt, SystemExit) as exc:
        return HostExit(exc)


def unwrapped(outcome: T | HostExit) -> T:
    """What :func:`carrying_exits` returned: the result, or its exit raised."""
    if isinstance(outcome, HostExit):
        raise outcome.exception
    return outcome
