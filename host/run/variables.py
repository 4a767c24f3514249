"""State as values (spec §7.9): the variables a run starts with, and those
it ends with (:class:`~tether.RunSession` threads them from one run to the
next)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tether.codec import (
    Done,
    Value,
    ValueModelError,
    count_items,
    encode_payload,
    to_wire_plain,
    value_items,
    variable_name_problem,
)

from ..limits import Limits


def prepare_variables(variables: Mapping[str, Any], bindings: Mapping[str, Any],
                      limits: Limits) -> dict[str, Value]:
    """``variables`` as wire values, checked as R-VARS-1 requires; raises
    TypeError or ValueError naming the variable at fault."""
    if not isinstance(variables, Mapping):
        raise TypeError("variables must be a mapping of names to values")
    wire: dict[str, Value] = {}
    for name, value in variables.items():
        if not isinstance(name, str):
            raise TypeError(f"variable names must be str, not {type(name).__name__}")
        problem = _name_problem(name, bindings)
        if problem:
            raise ValueError(f"variable {name!r} {problem}")
        try:
            wire[name], _ = to_wire_plain(value, limits.max_depth)
        except ValueModelError as exc:
            raise ValueError(f"variable {name!r}: {exc}") from None
    payload = encode_payload({"": wire})
    if len(payload) - 2 > limits.variables_bytes:
        raise ValueError(f"the variables take {len(payload) - 2} bytes, over the limit of "
                         f"{limits.variables_bytes} (Limits.variables_bytes)")
    items = value_items(limits.variables_bytes)
    if count_items(payload, items + 2) > items + 2:
        raise ValueError(f"the variables hold more than {items} values "
                         f"(Limits.variables_bytes / 16)")
    return wire


def variable_problem(name: str, value: Any, bindings: Mapping[str, Any],
                     limits: Limits) -> str | None:
    """Why ``name`` with ``value`` cannot be one of a run's variables (None:
    it can), as a run's DROPPED gives a reason (``$: date is outside the
    value model``); the variables' sum is :func:`prepare_variables`' to check."""
    problem = _name_problem(name, bindings)
    if problem:
        return f"the name {problem}"
    try:
        to_wire_plain(value, limits.max_depth)
    except ValueModelError as exc:
        return str(exc)
    return None


def _name_problem(name: str, bindings: Mapping[str, Any]) -> str | None:
    problem = variable_name_problem(name)
    if problem is None and name in bindings:
        problem = "is also the name of a binding"
    return problem


def returned_variables_problem(done: Done, payload_size: int, budget: int) -> str | None:
    """How the variables of ``done`` (a DONE of ``payload_size`` encoded
    bytes) break R-VARS-4/5 under ``budget`` (``variables_bytes``), or None.
    A forged DONE must not break the next run's RUN."""
    assert done.variables is not None
    for name in done.variables:
        problem = variable_name_problem(name)
        if problem is not None:
            return f"DONE.variables: {name!r} {problem}"
    items = value_items(budget)
    if payload_size > min(budget, items):  # else they surely fit
        payload = encode_payload({"dropped": done.dropped or {},
                                  "variables": done.variables})
        if len(payload) - 1 > budget:
            return (f"DONE's variables take {len(payload) - 1} bytes, over "
                    f"variables_bytes ({budget})")
        if count_items(payload, items + 3) > items + 3:  # the map, its two keys
            return f"DONE's variables hold more than {items} values"
    return None
