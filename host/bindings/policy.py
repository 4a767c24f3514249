"""Which calls of a binding need approval, as the binding declares it: a
:class:`~tether.Binding` made with ``requires_approval=``, or a callable
marked with :func:`requires_approval`. The value is ``True`` or a predicate
that receives the :class:`ApprovalRequest` and says whether this call needs
it; asking and the answer are the run's (``host/run/approvals.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from .description import Binding

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
