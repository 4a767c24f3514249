"""OpenAI Agents SDK: a ``run_code`` FunctionTool whose programs call the
agent's other function tools.

``Agent(..., tools=[run_code_tool([get_weather, get_population])])``, or
``code_mode(agent)`` for an agent that has them already: the model sees one
tool described by the tools' own schemas; each call the
program makes goes through the tool's ``on_invoke_tool``, with the run's
context. A program runs to its end, so it cannot stop for the SDK's
interrupt-and-resume approvals: a tool whose ``needs_approval`` asks for one
goes to ``approve(name, arguments)`` instead, and without it (or when it
says no) the program gets a ``BindingError`` of type ``PermissionError``.
"""

from __future__ import annotations

import inspect
import itertools
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from agents import Agent, FunctionTool, RunContextWrapper
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
    gives the model the reason as the tool's output."""
    counter = itertools.count()

    def bindings(context: ToolContext[Any]) -> list[Binding]:
        return [_binding(tool, context, approve, counter) for tool in tools]

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        code = json.loads(arguments)["code"]
        result = await _common.run(runtime, code, bindings(context), language=language,
                                   limits=limits)
        return _common.report(result)

    described = [_binding(tool, None, None, counter) for tool in tools]
    return FunctionTool(name=_common.RUN_CODE,
                        description=_common.description(runtime, described, language, limits),
                        params_json_schema=_common.CODE_SCHEMA, on_invoke_tool=invoke)


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


def _binding(tool: FunctionTool, context: ToolContext[Any] | None, approve: Approve | None,
             counter: itertools.count[int]) -> Binding:
    async def call(**arguments: Any) -> Any:
        assert context is not None
        raw = json.dumps(arguments)
        if not await _approved(tool, context, arguments, approve):
            raise PermissionError(f"{tool.name} needs approval, and it was not given")
        nested = ToolContext(context=context.context, usage=context.usage, tool_name=tool.name,
                             tool_call_id=f"{context.tool_call_id}:{next(counter)}",
                             tool_arguments=raw, agent=context.agent,
                             run_config=context.run_config)
        return await tool.on_invoke_tool(nested, raw)

    return Binding(name=tool.name, description=tool.description,
                   parameters=tool.params_json_schema, function=call)


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
