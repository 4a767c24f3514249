"""smolagents: a ``PythonExecutor`` for ``CodeAgent(executor=...)`` that runs
each step in a fresh tether guest, with the agent's tools (and managed
agents) on the host and the state between steps carried as values.

The agent's prompt has the model call tools as plain functions
(``get_weather(city="Oslo")``); tether's bindings are async, so in a
program without ``await`` the executor awaits every such call
(``(await get_weather(...))``, written in place, so line numbers hold),
turns a generator expression holding one into a list comprehension, and
makes a helper ``def`` that calls tools ``async`` where that is safe. A
program that awaits may make calls at once with ``asyncio.gather``; there
only whole-statement calls are awaited for it (see :func:`._awaited.awaited`).
``final_answer(...)`` ends the step with its argument as the answer. A
program that fails the check before the run, or ends in an error, raises
from the call, which the agent gives back to the model.
"""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Callable, Mapping
from typing import Any

from smolagents.local_python_executor import CodeOutput, PythonExecutor

from tether.host import Limits, SyncRuntime
from tether.host.run.variables import variable_problem

from . import _common
from ._awaited import FINAL_ANSWER, awaited

__all__ = ["TetherExecutor"]

# smolagents' input types as Python's ("any", images and audio: anything).
_TYPES: dict[str, Any] = {"string": str, "boolean": bool, "integer": int, "number": float,
                          "array": list[Any], "object": dict[str, Any], "null": type(None)}


class FinalAnswer(Exception):
    """Raised into the program by ``final_answer``: the step ends."""


class TetherExecutor(PythonExecutor):  # type: ignore[misc]  # smolagents is untyped
    """Runs each code step of a smolagents agent in a fresh tether guest.

    ``limits`` are each step's; the other keyword arguments go to the
    :class:`tether.SyncRuntime` the executor runs on (``pool``,
    ``sandbox``, ``python_packages``, ``preload``...). ``state`` holds the
    variables carried from one step to the next (values only: spec §6; the
    others are dropped, and listed in ``dropped`` with the reason, whether
    the agent sent them or a step left them). A step that ends with a
    bare expression gives its value, as smolagents' own executor does.
    ``cleanup()`` (which the agent calls) closes the Runtime. Programs may
    import the whole standard library (and the ``python_packages``): make
    the agent with ``additional_authorized_imports=["*"]``, so its prompt
    does not list a few modules as the only ones allowed.
    """

    def __init__(self, *, limits: Limits | None = None, **runtime_options: Any) -> None:
        self.limits = limits
        self.state: dict[str, Any] = {}
        self.dropped: dict[str, str] = {}
        self._tools: dict[str, Any] = {}
        self._runtime = SyncRuntime(**runtime_options)

    def send_tools(self, tools: dict[str, Any]) -> None:
        self._tools = dict(tools)

    def send_variables(self, variables: dict[str, Any]) -> None:
        self.state.update(variables)

    def __call__(self, code_action: str) -> CodeOutput:
        answer: list[Any] = []
        bindings = [_binding(name, tool, answer) for name, tool in self._tools.items()]
        carried, dropped = self._carried()
        result = self._runtime.run(awaited(code_action, set(self._tools)), bindings=bindings,
                                   limits=self.limits, check=True, variables=carried,
                                   last_expression=True)
        self.state.update(result.variables or {})
        self.dropped = {**dropped, **result.dropped_variables}
        if answer:
            return CodeOutput(output=answer[0], logs=result.output, is_final_answer=True)
        if not result.ok:
            raise RuntimeError(_common.failure_text(result))
        return CodeOutput(output=result.value, logs=result.output, is_final_answer=False)

    def _carried(self) -> tuple[dict[str, Any], dict[str, str]]:
        """The state to carry into a step (not the tools' names), and why
        each variable left out is: one the value model or the names it
        allows leave out (the agent's ``additional_args`` may hold dates,
        images, frames...) would otherwise fail every step."""
        limits = self.limits or self._runtime.runtime.limits
        carried, dropped = {}, {}
        for name, value in self.state.items():
            if name in self._tools:
                continue
            problem = variable_problem(name, value, self._tools, limits)
            if problem is None:
                carried[name] = value
            else:
                dropped[name] = problem
        return carried, dropped

    def cleanup(self) -> None:
        """Close the Runtime (its warm guests and its thread)."""
        self._runtime.close()


def _binding(name: str, tool: Any, answer: list[Any]) -> Callable[..., Any]:
    """A tool or managed agent as a binding with the signature its inputs
    declare (positional or keyword, as smolagents' prompt shows them), run
    in one of tether's threads (smolagents' tools are synchronous)."""
    if name == FINAL_ANSWER:
        def function(*args: Any, **kwargs: Any) -> Any:
            answer.append(tool(*args, **kwargs))
            raise FinalAnswer("the final answer was given; the step ends")
    else:
        def function(*args: Any, **kwargs: Any) -> Any:
            return _common.value(tool(*args, **kwargs), name)

    inputs: Mapping[str, Any] = getattr(tool, "inputs", {}) or {}
    parameters, hints, docs = [], {}, []
    for key, spec in inputs.items():
        hints[key] = _hint(spec)
        optional = bool(spec.get("nullable"))
        parameters.append(inspect.Parameter(
            key, inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=None if optional else inspect.Parameter.empty))
        if spec.get("description"):
            docs.append(f"    {key}: {spec['description']}")
    output = getattr(tool, "output_type", None)
    if isinstance(output, str):
        hints["return"] = _hint({"type": output})
    function.__name__ = name
    function.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    function.__annotations__ = hints
    description = getattr(tool, "description", "") or ""
    function.__doc__ = description + ("\n\nArgs:\n" + "\n".join(docs) if docs else "")
    return function


def _hint(spec: Mapping[str, Any]) -> Any:
    kinds = spec.get("type")
    names = kinds if isinstance(kinds, list) else [kinds]
    types = [_TYPES.get(n, Any) if isinstance(n, str) else Any for n in names]
    hint: Any = Any if Any in types else functools.reduce(operator.or_, types)
    return hint | None if spec.get("nullable") and hint is not Any else hint
