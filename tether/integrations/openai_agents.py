"""OpenAI Agents SDK: a ``run_code`` FunctionTool whose programs call the
agent's other function tools.

``Agent(..., tools=[run_code_tool([get_weather, get_population])])``, or
``code_mode(agent)`` for an agent that has them already: the model sees one
tool described by the tools' own schemas; each call the program makes goes
the way the SDK's run loop takes a tool call, with the run's context: the
tool's ``is_enabled``, its input guardrails, ``invoke_function_tool`` (so
its timeout and failure handling apply), then its output guardrails. A
guardrail's rejection reaches the program as a ``BindingError`` of type
``PermissionError`` carrying the guardrail's message; a tripwire (or any
other SDK exception that would end the run) ends the agent's run once the
program stops. A program runs to its end, so it cannot stop for the SDK's
interrupt-and-resume approvals: a tool whose ``needs_approval`` asks for one
goes to ``approve(name, arguments)`` instead, and without it (or when it
says no) the program gets a ``BindingError`` of type ``PermissionError``.
"""

from __future__ import annotations

import inspect
import itertools
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from agents import (
    Agent,
    AgentsException,
    FunctionTool,
    RunContextWrapper,
    ToolInputGuardrailData,
    ToolInputGuardrailTripwireTriggered,
    ToolOutputGuardrailData,
    ToolOutputGuardrailTripwireTriggered,
)
from agents.tool import invoke_function_tool
from agents.tool_context import ToolContext

from tether.host import Binding, Limits, Runtime

from . import _common

__all__ = ["Approve", "code_mode", "run_code_tool"]

#: Decides a call that needs approval: ``(tool name, arguments) -> allowed``.
Approve = Callable[[str, dict[str, Any]], bool | Awaitable[bool]]


def run_code_tool(tools: Sequence[FunctionTool], *, runtime: Runtime | None = None,
                  approve: Approve | None = None, language: str = "python",
                  limits: Limits | None = None) -> FunctionTool:
    """A FunctionTool named ``run_code`` whose programs may call ``tools``.
    ``runtime`` runs them (default: a Runtime per call); each is type-checked
    first, and a program that fails the check, or ends without a value,
    gives the model the reason as the tool's output. A tool whose
    ``is_enabled`` is False is left out; a callable ``is_enabled`` is asked
    at each run (a tool it disables is not among the program's functions)
    and again at each call."""
    offered = [tool for tool in tools if tool.is_enabled is not False]
    shapes = {id(tool): _shape(tool) for tool in offered}  # once, not at every run
    counter = itertools.count()
    runtimes = _common.Runtimes(runtime)

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        code = _code(arguments)
        if code is None:
            return _BAD_ARGUMENTS
        enabled = [tool for tool in offered if await _enabled(tool, context)]
        ended: list[AgentsException] = []
        bindings = [_binding(tool, shapes[id(tool)], context, approve, counter=counter,
                             ended=ended) for tool in enabled]
        result = await _common.run(runtimes, code, bindings, language=language, limits=limits)
        if ended:
            raise ended[0]
        return _common.report(result)

    described = [_binding(tool, shapes[id(tool)], None, None, counter=counter, ended=[])
                 for tool in offered]
    return FunctionTool(name=_common.RUN_CODE,
                        description=_common.description(runtime, described, language, limits),
                        params_json_schema=_common.CODE_SCHEMA, on_invoke_tool=invoke)


#: What the model reads back when run_code's arguments are not ``{"code": str}``.
_BAD_ARGUMENTS = ('run_code takes {"code": str}: a JSON object whose "code" is the '
                 "program's source. Call it again with that.")


def _code(arguments: str) -> str | None:
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return None
    code = parsed.get("code") if isinstance(parsed, dict) else None
    return code if isinstance(code, str) else None


def code_mode(agent: Agent[Any], *, runtime: Runtime | None = None,
              approve: Approve | None = None, language: str = "python",
              limits: Limits | None = None) -> Agent[Any]:
    """A copy of ``agent`` whose function tools are folded into one
    ``run_code`` tool (its other tools stay as they are)."""
    functions = [tool for tool in agent.tools if isinstance(tool, FunctionTool)]
    others = [tool for tool in agent.tools if not isinstance(tool, FunctionTool)]
    run_code = run_code_tool(functions, runtime=runtime, approve=approve, language=language,
                             limits=limits)
    return agent.clone(tools=[*others, run_code])


def _shape(tool: FunctionTool) -> tuple[dict[str, Any], list[str]]:
    """``tool``'s parameters as its binding declares them, and the nullable
    ones its strict schema requires (sent as null when not given)."""
    parameters = _defaults_optional(tool.params_json_schema)
    return parameters, _nullable(parameters) if tool.strict_json_schema else []


def _binding(tool: FunctionTool, shape: tuple[dict[str, Any], list[str]],
             context: ToolContext[Any] | None, approve: Approve | None, *,
             counter: itertools.count[int], ended: list[AgentsException]) -> Binding:
    """``tool`` as a binding (``shape``: :func:`_shape`'s); ``ended`` collects
    the SDK exceptions that end the agent's run (after one, the program's
    further calls fail too)."""
    parameters, nullable = shape

    async def call(**arguments: Any) -> Any:
        assert context is not None
        # A strict schema's nullable arguments are sent as null when not given.
        arguments = {**dict.fromkeys(nullable), **arguments}
        if ended:
            raise ended[0]
        if not await _enabled(tool, context):
            raise PermissionError(f"{tool.name} is not enabled")
        raw = json.dumps(arguments)
        if not await _approved(tool, context, arguments, approve):
            raise PermissionError(f"{tool.name} needs approval, and it was not given")
        nested = ToolContext(context=context.context, usage=context.usage, tool_name=tool.name,
                             tool_call_id=f"{context.tool_call_id}:{next(counter)}",
                             tool_arguments=raw, agent=context.agent,
                             run_config=context.run_config)
        try:
            output = await _guarded(tool, nested, raw)
        except AgentsException as exc:
            ended.append(exc)
            raise
        return _common.jsonable(output)

    return Binding(name=tool.name, description=tool.description,
                   parameters=parameters,
                   result=tool.output_json_schema, function=call)


async def _guarded(tool: FunctionTool, context: ToolContext[Any], raw: str) -> Any:
    """The call as the SDK's run loop makes it: input guardrails, the tool
    (with its timeout), output guardrails. A rejection raises
    PermissionError with the guardrail's message (what the model would
    have read); a tripwire raises the SDK's exception."""
    agent = cast(Agent[Any], context.agent)
    for check in tool.tool_input_guardrails or ():
        verdict = await check.run(ToolInputGuardrailData(context=context, agent=agent))
        if verdict.behavior["type"] == "raise_exception":
            raise ToolInputGuardrailTripwireTriggered(guardrail=check, output=verdict)
        if verdict.behavior["type"] == "reject_content":
            raise PermissionError(verdict.behavior["message"])
    output = await invoke_function_tool(function_tool=tool, context=context, arguments=raw)
    for guard in tool.tool_output_guardrails or ():
        verdict = await guard.run(ToolOutputGuardrailData(context=context, agent=agent,
                                                          output=output))
        if verdict.behavior["type"] == "raise_exception":
            raise ToolOutputGuardrailTripwireTriggered(guardrail=guard, output=verdict)
        if verdict.behavior["type"] == "reject_content":
            raise PermissionError(verdict.behavior["message"])
    return output


def _defaults_optional(schema: Any) -> Any:
    """``schema`` with every property that has a ``default`` left out of
    its object's ``required`` (the SDK's strict schemas list them all)."""
    if isinstance(schema, list):
        return [_defaults_optional(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    copied = {key: _defaults_optional(value) for key, value in schema.items()}
    properties, required = copied.get("properties"), copied.get("required")
    if isinstance(properties, dict) and isinstance(required, list):
        copied["required"] = [name for name in required
                               if not (isinstance(properties.get(name), dict)
                                       and "default" in properties[name])]
    return copied


def _nullable(parameters: dict[str, Any]) -> list[str]:
    """The required parameters that may be null, made optional in
    ``parameters`` with a default of null: the SDK's strict schemas drop a
    ``None`` default and require the parameter, where null means not given."""
    properties = parameters.get("properties", {})
    names = [name for name in parameters.get("required", ())
             if isinstance(properties.get(name), dict) and _may_be_null(properties[name])]
    if names:
        for name in names:
            properties[name] = {**properties[name], "default": None}
        parameters["required"] = [name for name in parameters["required"]
                                  if name not in names]
    return names


def _may_be_null(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return (kind == "null" or (isinstance(kind, list) and "null" in kind)
            or any(isinstance(option, dict) and _may_be_null(option)
                   for option in schema.get("anyOf", ())))


async def _enabled(tool: FunctionTool, context: ToolContext[Any]) -> bool:
    """The tool's ``is_enabled``, asked as the SDK asks it."""
    enabled = tool.is_enabled
    if isinstance(enabled, bool):
        return enabled
    answer = enabled(context, cast(Agent[Any], context.agent))
    return bool(await answer if inspect.isawaitable(answer) else answer)


async def _approved(tool: FunctionTool, context: RunContextWrapper[Any],
                    arguments: dict[str, Any], approve: Approve | None) -> bool:
    needs = tool.needs_approval
    if callable(needs):
        needs = await needs(context, arguments, "")
    if not needs:
        return True
    if approve is None:
        return False
    answer = approve(tool.name, arguments)
    return bool(await answer if inspect.isawaitable(answer) else answer)
