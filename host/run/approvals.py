"""Asking before a binding runs, and the answer.

A binding requires approval when it is a :class:`~tether.Binding` made with
``requires_approval=``, or a callable marked with
:func:`~tether.requires_approval` (``host/bindings/policy.py``); the value
is ``True`` or a predicate that receives the :class:`~tether.ApprovalRequest`
and says whether this call needs it. The run's (or
the Runtime's) ``approve`` hook then answers :class:`Allow`, :class:`Deny`
or :class:`Edit`. A call that needs approval where no hook is given is
denied.

While a hook waits, the run's wall clock stands still (a person may take
minutes), for at most ``Limits.approval_pause`` seconds in all per run;
past that it runs on even while approvals wait, so a program that keeps
one waiting all the time still ends by ``timeout`` + ``approval_pause``.
Only that clock stands still: the program's CPU time (``cpu_seconds``)
and the other calls' ``call_timeout`` count on. Each wait is bounded by
``Limits.approval_timeout``, after which the call is denied.
``Limits.call_timeout`` starts when the binding is called, after the
approval.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tether.codec import Call, CallError, ErrorCode

from ..bindings.policy import ApprovalRequest, Policy
from .checkpoints import Suspend

logger = logging.getLogger("tether")

#: The type a denied call's BindingError carries.
DENIED = "Denied"


@dataclass(frozen=True, slots=True)
class Allow:
    """Run the binding with the arguments the program passed."""


@dataclass(frozen=True, slots=True)
class Deny:
    """Do not run it: the program's call raises ``BindingError`` with type
    ``Denied`` and ``reason`` as its message."""

    reason: str = "the call was denied"  #: the BindingError's message


@dataclass(frozen=True, slots=True)
class Edit:
    """Run the binding with these arguments instead (checked like the
    program's own). A hook may also answer (or raise) :class:`~tether.Suspend`
    to suspend the run at this call."""

    args: list[Any] = field(default_factory=list)  #: positional arguments to pass
    kwargs: dict[str, Any] = field(default_factory=dict)  #: keyword arguments to pass


Approval = Allow | Deny | Edit | Suspend
ApproveHook = Callable[[ApprovalRequest], Awaitable[Approval]]

class Gate:
    """Asks ``hook`` about the calls of one run whose binding requires it,
    the run's wall clock standing still (``pause``/``unpause``) while it
    waits."""

    def __init__(self, hook: ApproveHook | None, max_wait: float,
                 clock: Clock) -> None:
        self._hook = hook
        self._max_wait = max_wait
        self._clock = clock
        self.run_id = secrets.token_hex(8)

    async def review(self, call: Call, policy: Policy) -> CallError | Edit | Suspend | None:
        """None to go on as called, an Edit, a Suspend (the hook suspends
        the run), or the refusal to send."""
        request = ApprovalRequest(call.name, list(call.args), dict(call.kwargs), call.id,
                                  self.run_id)
        try:
            needed = policy is True or (callable(policy) and policy(request))
        except Exception as exc:
            logger.exception("tether: an approval predicate failed")
            return _denied(f"the approval check failed: {type(exc).__name__}")
        if not needed:
            return None
        if self._hook is None:
            return _denied(f"{call.name}() requires approval and none can be asked")
        self._clock.pause()
        try:
            async with asyncio.timeout(self._max_wait):
                answer = await self._hook(request)
        except TimeoutError:
            return _denied(f"no approval within {self._max_wait:g} s")
        except Suspend as exc:
            return exc
        except Exception as exc:
            logger.exception("tether: an approval hook failed")
            return _denied(f"the approval hook failed: {type(exc).__name__}")
        finally:
            self._clock.unpause()
        if isinstance(answer, Allow):
            return None
        if isinstance(answer, Deny):
            return _denied(answer.reason)
        if isinstance(answer, Edit | Suspend):
            return answer
        return _denied(f"the approval hook answered {type(answer).__name__}, "
                       "not Allow, Deny or Edit")


class Clock:
    """The run's wall-clock deadline, which stands still while any approval
    waits, for at most ``most`` seconds in all (``Limits.approval_pause``).

    A pause moves the deadline as far as what is left of ``most`` would
    take it, so that it falls due on its own once that is spent; the end
    of the pause moves it back to what the pause took."""

    def __init__(self, most: float) -> None:
        self.deadline: asyncio.Timeout | None = None
        self._most = most
        self._left = most
        self._waiting = 0
        self._due: float | None = None  # the deadline before the pause, while paused
        self._since = 0.0  # when the pause began

    def stood_still(self) -> float:
        """Seconds the deadline has stood still so far, the pause going on included."""
        if self._due is None:
            return self._most - self._left
        now = asyncio.get_running_loop().time()
        return self._most - self._left + min(now - self._since, self._left)

    def pause(self) -> None:
        self._waiting += 1
        deadline = self.deadline
        if self._waiting > 1 or deadline is None or deadline.expired() or self._left <= 0:
            return
        due = deadline.when()
        if due is None:
            return
        with contextlib.suppress(RuntimeError):  # the run's wait is already over
            deadline.reschedule(due + self._left)
            self._due, self._since = due, asyncio.get_running_loop().time()

    def unpause(self) -> None:
        self._waiting -= 1
        deadline, due = self.deadline, self._due
        if self._waiting > 0 or due is None or deadline is None:
            return
        stood = min(asyncio.get_running_loop().time() - self._since, self._left)
        self._left -= stood
        self._due = None
        with contextlib.suppress(RuntimeError):
            deadline.reschedule(due + stood)


def _denied(reason: str) -> CallError:
    return CallError(ErrorCode.BINDING_ERROR, DENIED, reason)
