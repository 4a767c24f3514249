"""State as values (spec §7.9): the variables a run starts with, and a
helper that threads them from one run's result to the next run."""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

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

from ..bindings.prepared import BindingsArg, prepare_bindings
from ..limits import Limits
from ..result import RunResult
from ..sandbox.profiles import Sandbox

if TYPE_CHECKING:
    from ..runtime import Runtime


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


class RunSession:
    """Runs programs one after the other, each in a fresh guest process,
    passing the variables each run ends with to the next run as values
    (spec §7.9). Nothing else carries over: not open files, not imported
    modules, not functions the program defined.

    Made by :meth:`Runtime.session`. ``variables`` is the state the next
    run starts with: a plain dict of values, to save (e.g. as JSON when the
    values allow) and give to a new session later. A run that ends before
    its program did (timeout, crash, cancelled) leaves it as it was; a
    program that raised still passes on what it had assigned, as a notebook
    cell does.
    """

    #: The variables the next run starts with (values of the value model).
    variables: dict[str, Any]
    #: Every run's result, in order.
    results: list[RunResult]

    def __init__(self, runtime: Runtime, variables: Mapping[str, Any] | None = None, *,
                 language: str = "python", bindings: BindingsArg = None,
                 limits: Limits | None = None, sandbox: Sandbox | str | None = None,
                 last_expression: bool = False) -> None:
        self._runtime = runtime
        self.variables = dict(variables or {})
        self.language = language
        self.bindings = bindings
        self.limits = limits
        self.sandbox = sandbox
        self.last_expression = last_expression
        self.results = []

    async def run(self, source: str, *, language: str | None = None,
                  bindings: BindingsArg = None, limits: Limits | None = None,
                  last_expression: bool | None = None) -> RunResult:
        """Run ``source`` with the session's variables; the arguments
        default to the session's own. A variable named as one of this run's
        bindings is not passed to it (the binding takes the name) and is
        kept for later runs."""
        bindings = bindings if bindings is not None else self.bindings
        names = set(prepare_bindings(bindings))
        withheld = {k: v for k, v in self.variables.items() if k in names}
        result = await self._runtime.run(
            source,
            language=language or self.language,
            bindings=bindings,
            limits=limits or self.limits,
            sandbox=self.sandbox,
            variables={k: v for k, v in self.variables.items() if k not in names},
            last_expression=self.last_expression if last_expression is None else last_expression,
        )
        if result.variables is not None:
            self.variables = {**withheld, **result.variables}
        self.results.append(result)
        return result

    def save(self) -> dict[str, Value]:
        """The variables the next run would start with, as plain data; give
        them back as ``Runtime.session(variables=...)``."""
        return dict(self.variables)

    async def __aenter__(self) -> RunSession:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        return None  # every run cleaned up after itself already
