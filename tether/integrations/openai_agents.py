"""OpenAI Agents SDK: a ``run_code`` FunctionTool whose programs call the
agent's other function tools.

``Agent(..., tools=[run_code_tool([get_weather, get_population])])``, or
``code_mode(agent)`` for an agent that has them already: the model sees one
tool described by the tools' own schemas; each call the program makes goes
the way the SDK's run loop takes a tool call, with the run's context: the
tool's ``is_enabled``, its input guardrails, ``invoke_function_tool`` (so
its timeout and failure handling apply), then its output guardrails, in a
function span of its own under ``run_code``'s and between the
``on_tool_start``/``on_tool_end`` of the agent's hooks (and of the run's,
given as ``hooks``). A guardrail's rejection reaches the program as a
``BindingError`` of type ``PermissionError`` carrying the guardrail's
message; a tripwire (or any other SDK exception that would end the run)
ends the agent's run once the program stops.

A call of a tool whose ``needs_approval`` asks for one pauses the run with
the SDK's own interruption: ``result.interruptions`` holds an approval item
for that tool with the program's arguments, and ``state.approve(item)`` (or
``reject``) then ``Runner.run(agent, state)`` goes on, in any process
(``RunState.to_json``/``from_json``): the program resumes from that call,
the approved tool run, a rejected one raising ``Denied`` in the program.
``run_code`` is an agent tool for this (``Agent.as_tool``): the program runs
in the turns of a nested agent named ``run_code``, whose state (and in it
the run's checkpoint) the SDK keeps in the outer run's. With
``approve(name, arguments)`` given instead, the call waits for its answer.
"""

from __future__ import annotations

import base64
import inspect
import itertools
import json
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, cast

from agents import (
    Agent,
    AgentsException,
    FunctionTool,
    ModelBehaviorError,
    ModelSettings,
    RunContextWrapper,
    RunHooks,
    ToolInputGuardrailData,
    ToolInputGuardrailTripwireTriggered,
    ToolOutputGuardrailData,
    ToolOutputGuardrailTripwireTriggered,
)
from agents.agent_output import AgentOutputSchemaBase
from agents.handoffs import Handoff
from agents.items import ModelResponse, TResponseInputItem
from agents.models.interface import Model, ModelTracing
from agents.tool import Tool, invoke_function_tool
from agents.tool_context import ToolContext
from agents.tracing import function_span
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from pydantic import BaseModel, Field

from tether.host import Binding, Limits, RunResult, Runtime, Suspend
from tether.host.run.approvals import DENIED

from . import _common

__all__ = ["Approve", "code_mode", "run_code_tool"]

#: Decides a call that needs approval: ``(tool name, arguments) -> allowed``.
Approve = Callable[[str, dict[str, Any]], bool | Awaitable[bool]]

#: The ``run_code`` call being run, for the nested agent's model (the SDK
#: gives a model no run context).
_CALLER: ContextVar[ToolContext[Any] | None] = ContextVar("tether_run_code_caller",
                                                          default=None)

#: Marks the nested agent's message that holds a suspended run.
_SUSPENDED = "tether_suspended"
#: Wraps what an approved tool returned, to tell it from a rejection's text.
_RETURNED = "tether_returned"


class _Code(BaseModel):
    code: str = Field(description="the program's source")


def run_code_tool(tools: Sequence[FunctionTool], *, runtime: Runtime | None = None,
                  approve: Approve | None = None, hooks: RunHooks[Any] | None = None,
                  language: str = "python", limits: Limits | None = None) -> FunctionTool:
    """A FunctionTool named ``run_code`` whose programs may call ``tools``.
    ``runtime`` runs them (default: one Runtime of the tool's own per event
    loop, kept for its later calls); each is type-checked first, and a
    program that fails the check, or ends without a value, gives the model
    the reason as the tool's output. A tool whose ``is_enabled`` is False is
    left out; a callable ``is_enabled`` is asked at each run (a tool it
    disables is not among the program's functions) and again at each call.
    ``hooks``: the run's RunHooks, told about each call a program makes."""
    offered = [tool for tool in tools if tool.is_enabled is not False]
    programs = _Programs(offered, _common.Runtimes(runtime), approve, hooks, language, limits)
    asking = [_asking(tool) for tool in offered if tool.needs_approval is not False]
    nested = Agent(name=_common.RUN_CODE, model=_ProgramModel(programs), tools=list(asking),
                   model_settings=ModelSettings(parallel_tool_calls=False))
    described = [_binding(tool, programs.shapes[id(tool)], None, programs, ended=[])
                 for tool in offered]
    run_code = nested.as_tool(
        tool_name=_common.RUN_CODE,
        tool_description=_common.description(runtime, described, language, limits),
        parameters=_Code, input_builder=_code_of, hooks=hooks, max_turns=10_000,
        custom_output_extractor=_report_of, failure_error_function=_failure)
    run_agent = run_code.on_invoke_tool

    async def invoke(context: ToolContext[Any], arguments: str) -> Any:
        token = _CALLER.set(context)
        try:
            return await run_agent(context, arguments)
        finally:
            _CALLER.reset(token)

    run_code.on_invoke_tool = invoke
    return run_code


def code_mode(agent: Agent[Any], *, runtime: Runtime | None = None,
              approve: Approve | None = None, hooks: RunHooks[Any] | None = None,
              language: str = "python", limits: Limits | None = None) -> Agent[Any]:
    """A copy of ``agent`` whose function tools are folded into one
    ``run_code`` tool (its other tools stay as they are)."""
    functions = [tool for tool in agent.tools if isinstance(tool, FunctionTool)]
    others = [tool for tool in agent.tools if not isinstance(tool, FunctionTool)]
    run_code = run_code_tool(functions, runtime=runtime, approve=approve, hooks=hooks,
                             language=language, limits=limits)
    return agent.clone(tools=[*others, run_code])


#: What the model reads back when run_code's arguments are not ``{"code": str}``.
_BAD_ARGUMENTS = ('run_code takes {"code": str}: a JSON object whose "code" is the '
                 "program's source. Call it again with that.")


def _failure(context: RunContextWrapper[Any], error: Exception) -> str:
    """Arguments that are not ``{"code": str}`` come back to the model; any
    other exception (a guardrail's tripwire, say) ends the agent's run, as
    it would without tether."""
    if isinstance(error, ModelBehaviorError):
        return _BAD_ARGUMENTS
    raise error


def _code_of(options: Any) -> str:
    return str((options.get("params") or {}).get("code", ""))


async def _report_of(result: Any) -> str:
    return str(result.final_output)


@dataclass
class _Programs:
    """What every program of one ``run_code`` tool shares."""

    tools: list[FunctionTool]
    runtimes: _common.Runtimes
    approve: Approve | None
    hooks: RunHooks[Any] | None
    language: str
    limits: Limits | None
    counter: itertools.count[int] = field(default_factory=itertools.count)
    shapes: dict[int, tuple[dict[str, Any], list[str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.shapes = {id(tool): _shape(tool) for tool in self.tools}  # once, not at every run


class _ProgramModel(Model):
    """The nested ``run_code`` agent's model: it runs the program (the
    agent's input), and answers with what it returned, or, when the
    program calls a tool that needs approval, with that call (the SDK then
    asks for the approval) and a message holding the suspended run's
    checkpoint; given the call's output, it resumes the run from it."""

    def __init__(self, programs: _Programs) -> None:
        self.programs = programs

    async def get_response(self, system_instructions: str | None,
                           input: str | list[TResponseInputItem],
                           model_settings: ModelSettings, tools: list[Tool],
                           output_schema: AgentOutputSchemaBase | None,
                           handoffs: list[Handoff], tracing: ModelTracing, *,
                           previous_response_id: str | None, conversation_id: str | None,
                           prompt: Any) -> ModelResponse:
        context = _CALLER.get()
        if context is None:
            raise RuntimeError("the run_code agent runs only as the run_code tool")
        programs = self.programs
        items = [input] if isinstance(input, str) else list(input)
        enabled = [tool for tool in programs.tools if await _enabled(tool, context)]
        ended: list[AgentsException] = []
        waiting: list[tuple[str, dict[str, Any]]] = []
        bindings = [_binding(tool, programs.shapes[id(tool)], context, programs, ended=ended,
                             waiting=waiting) for tool in enabled]
        runtime = await programs.runtimes.get()
        suspended = _last_suspension(items)
        printed = ""
        if suspended is None:
            result = await runtime.run(_code(items), language=programs.language,
                                       bindings=bindings, limits=programs.limits, check=True,
                                       suspendable=True)
        else:
            value, error = _answer(items, str(suspended["call_id"]))
            printed = str(suspended["printed"])
            result = await runtime.resume(base64.b64decode(str(suspended["checkpoint"])),
                                          value, error=error, bindings=bindings)
        if ended:
            raise ended[0]
        return _response(result, waiting, printed, next(programs.counter))

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("run_code's agent answers with get_response")


def _code(items: list[Any]) -> str:
    first = items[0]
    if isinstance(first, str):
        return first
    content = first.get("content") if isinstance(first, dict) else None
    return content if isinstance(content, str) else ""


def _last_suspension(items: list[Any]) -> dict[str, Any] | None:
    """The suspended run the nested agent's last message of ours holds."""
    for item in reversed(items):
        if isinstance(item, dict) and item.get("type") == "message" and \
                item.get("role") == "assistant":
            for part in item.get("content") or ():
                text = part.get("text") if isinstance(part, dict) else None
                if isinstance(text, str) and text.startswith("{"):
                    held = json.loads(text)
                    if isinstance(held, dict) and _SUSPENDED in held:
                        return cast(dict[str, Any], held[_SUSPENDED])
            return None
    return None


def _answer(items: list[Any], call_id: str) -> tuple[Any, BaseException | None]:
    """What the call that waited for approval gave: its value, or the
    exception the program's call raises (a rejection: Denied)."""
    for item in reversed(items):
        if isinstance(item, dict) and item.get("type") == "function_call_output" and \
                item.get("call_id") == call_id:
            output = item.get("output")
            text = output if isinstance(output, str) else json.dumps(output)
            try:
                held = json.loads(text)
            except ValueError:
                held = None
            if isinstance(held, dict) and _RETURNED in held:
                return held[_RETURNED], None
            return None, _common.raised(DENIED, text)
    return None, _common.raised(DENIED, "the call was not answered")


def _response(result: RunResult, waiting: list[tuple[str, dict[str, Any]]], printed: str,
              turn: int) -> ModelResponse:
    if result.status == "suspended" and waiting and result.checkpoint is not None:
        name, arguments = waiting[0]
        call_id = f"tether_{turn}"
        held = {_SUSPENDED: {"checkpoint": base64.b64encode(result.checkpoint).decode(),
                             "printed": printed + result.output, "call_id": call_id}}
        return ModelResponse(output=[_message(json.dumps(held)), ResponseFunctionToolCall(
            type="function_call", call_id=call_id, name=name, arguments=json.dumps(arguments))],
            usage=Usage(), response_id=None)
    return ModelResponse(output=[_message(_common.report(result, printed))], usage=Usage(),
                         response_id=None)


def _message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="tether", type="message", role="assistant", status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])])


def _asking(tool: FunctionTool) -> FunctionTool:
    """``tool`` for the nested agent, where the SDK asks for its approval:
    what it returns is wrapped, so the model tells it from a rejection."""
    run = tool.on_invoke_tool

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        return json.dumps({_RETURNED: _common.value(await run(context, arguments), tool.name)},
                          default=_common.bytes_as_text)

    return FunctionTool(name=tool.name, description=tool.description,
                        params_json_schema=tool.params_json_schema, on_invoke_tool=invoke,
                        strict_json_schema=tool.strict_json_schema,
                        is_enabled=tool.is_enabled, needs_approval=tool.needs_approval,
                        tool_input_guardrails=tool.tool_input_guardrails,
                        tool_output_guardrails=tool.tool_output_guardrails,
                        timeout_seconds=tool.timeout_seconds)


def _shape(tool: FunctionTool) -> tuple[dict[str, Any], list[str]]:
    """``tool``'s parameters as its binding declares them, and the nullable
    ones its strict schema requires (sent as null when not given)."""
    parameters = _defaults_optional(tool.params_json_schema)
    return parameters, _nullable(parameters) if tool.strict_json_schema else []


def _binding(tool: FunctionTool, shape: tuple[dict[str, Any], list[str]],
             context: ToolContext[Any] | None, programs: _Programs, *,
             ended: list[AgentsException],
             waiting: list[tuple[str, dict[str, Any]]] | None = None) -> Binding:
    """``tool`` as a binding (``shape``: :func:`_shape`'s); ``ended`` collects
    the SDK exceptions that end the agent's run (after one, the program's
    further calls fail too); ``waiting`` the call that waits for approval."""
    parameters, nullable = shape

    async def call(**arguments: Any) -> Any:
        assert context is not None and waiting is not None
        # A strict schema's nullable arguments are sent as null when not given.
        arguments = {**dict.fromkeys(nullable), **arguments}
        if ended:
            raise ended[0]
        if not await _enabled(tool, context):
            raise PermissionError(f"{tool.name} is not enabled")
        raw = json.dumps(arguments)
        if await _needs_approval(tool, context, arguments):
            if programs.approve is None:
                waiting.append((tool.name, arguments))
                raise Suspend(f"{tool.name} waits for approval")
            answer = programs.approve(tool.name, arguments)
            if not (await answer if inspect.isawaitable(answer) else answer):
                raise _common.raised(DENIED, f"{tool.name} needs approval, and it was not given")
        nested = ToolContext(context=context.context, usage=context.usage, tool_name=tool.name,
                             tool_call_id=f"{context.tool_call_id}:{next(programs.counter)}",
                             tool_arguments=raw, agent=context.agent,
                             run_config=context.run_config)
        with function_span(tool.name, input=raw) as span:
            await _told(programs, "start", nested, tool)
            try:
                output = await _guarded(tool, nested, raw)
            except AgentsException as exc:
                ended.append(exc)
                raise
            span.span_data.output = output
            await _told(programs, "end", nested, tool, output)
        return _common.value(output, tool.name, tool.output_json_schema)

    return Binding(name=tool.name, description=tool.description,
                   parameters=parameters,
                   result=tool.output_json_schema, function=call)


async def _told(programs: _Programs, moment: str, context: ToolContext[Any],
                tool: FunctionTool, output: Any = None) -> None:
    """The agent's hooks and the run's, told as the SDK tells them."""
    agent = cast(Agent[Any], context.agent)
    for hooks in (programs.hooks, getattr(agent, "hooks", None)):
        if hooks is None:
            continue
        if moment == "start":
            await hooks.on_tool_start(context, agent, tool)
        else:
            await hooks.on_tool_end(context, agent, tool, output)


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


async def _needs_approval(tool: FunctionTool, context: RunContextWrapper[Any],
                          arguments: dict[str, Any]) -> bool:
    needs = tool.needs_approval
    if callable(needs):
        needs = await needs(context, arguments, "")
    return bool(needs)
