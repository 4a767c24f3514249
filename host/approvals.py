"""Asking before a binding runs: which calls need approval, and the answer.

A binding requires approval when it is a :class:`~tether.Binding` made with
``requires_approval=``, or a callable marked with :func:`requires_approval`;
the value is ``True`` or a predicate that receives the
:class:`ApprovalRequest` and says whether this call needs it. The run's (or
the Runtime's) ``approve`` hook then answers :class:`Allow`, :class:`Deny`
or :class:`Edit`. A call that needs approval where no hook is given is
denied.

While a hook waits, the run's wall clock is paused (a person may take
minutes), so ``Limits.timeout`` counts the program's own time only; each
wait is bounded by ``Limits.approval_timeout``, after which the call is
denied. ``Limits.call_timeout`` starts when the binding is called, after
the approval.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, overload

from tether.codec import Call, CallError, ErrorCode

from .checkpoints import Suspend
from .description import Binding

logger = logging.getLogger("tether")

#: The type a denied call's BindingError carries.
DENIED = "Denied"

_MARK = "__tether_requires_approval__"


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A binding call waiting for approval: the binding's ``name``, the
    arguments as the program passed them, the call's ``call_id`` and the
    ``run_id`` shared by the calls of one run."""

    name: str  #: the binding's name in the program
    args: list[Any]  #: positional arguments as passed
    kwargs: dict[str, Any]  #: keyword arguments as passed
    call_id: int  #: the call's id in the run (as in CallStarted)
    run_id: str  #: random, the same for every call of one run


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
Policy = bool | Callable[[ApprovalRequest], bool]

F = TypeVar("F", bound=Callable[..., Any])


@overload
def requires_approval(function: F, /) -> F: ...
@overload
def requires_approval(*, when: Callable[[ApprovalRequest], bool]) -> Callable[[F], F]: ...
def requires_approval(function: F | None = None, /, *,
                      when: Callable[[ApprovalRequest], bool] | None = None) -> Any:
    """Mark a callable binding as needing approval: ``@requires_approval``
    for every call, ``@requires_approval(when=predicate)`` for the calls
    the predicate picks."""
    def mark(f: F) -> F:
        setattr(f, _MARK, True if when is None else when)
        return f
    return mark if function is None else mark(function)


def policy_of(binding: Any) -> Policy | None:
    """The approval policy of a binding as given (None: never asks)."""
    policy = binding.requires_approval if isinstance(binding, Binding) else None
    if policy is None or policy is False:
        policy = getattr(binding, _MARK, None)
    if policy is None or policy is False:
        return None
    if policy is not True and not callable(policy):
        raise TypeError("requires_approval must be a bool or a predicate")
    return policy


class Gate:
    """Asks ``hook`` about the calls of one run whose binding requires it,
    pausing the run's wall clock (``pause``/``unpause``) while it waits."""

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
    """The run's wall-clock deadline, paused while any approval waits."""

    def __init__(self) -> None:
        self.deadline: asyncio.Timeout | None = None
        self._waiting = 0
        self._left: float | None = None  # of the deadline, while paused

    def pause(self) -> None:
        self._waiting += 1
        deadline = self.deadline
        if self._waiting > 1 or deadline is None or deadline.expired():
            return
        when = deadline.when()
        if when is not None:
            with contextlib.suppress(RuntimeError):  # the run's wait is already over
                deadline.reschedule(None)
                self._left = when - asyncio.get_running_loop().time()

    def unpause(self) -> None:
        self._waiting -= 1
        deadline, left = self.deadline, self._left
        if self._waiting == 0 and left is not None and deadline is not None:
            self._left = None
            with contextlib.suppress(RuntimeError):
                deadline.reschedule(asyncio.get_running_loop().time() + left)


def _denied(reason: str) -> CallError:
    return CallError(ErrorCode.BINDING_ERROR, DENIED, reason)
