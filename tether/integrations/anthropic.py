"""Anthropic SDK: a ``run_code`` tool for the client-side tool runner, with
the other tools as bindings: the local counterpart of Anthropic's hosted
programmatic tool calling.

``client.beta.messages.tool_runner(..., tools=[run_code_tool([get_weather,
get_population])])``: the model sees one tool, described by the tools' own
schemas; the program it writes runs in a fresh tether guest on this machine,
and each call it makes runs the tool here (``tool.call``; a text result
that is a JSON object or array reaches the program parsed). A program that
fails the check before the run, or ends without a value, comes back as an
error result (``is_error``) saying why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from anthropic.lib.tools import BetaAsyncFunctionTool, BetaFunctionTool, ToolError

from tether.host import Binding, Limits, Runtime, describe

from . import _common

__all__ = ["run_code_tool"]

#: The tools the runner runs itself, either kind.
AnyTool = BetaAsyncFunctionTool[Any] | BetaFunctionTool[Any]


def run_code_tool(tools: Sequence[AnyTool], *, runtime: Runtime | None = None,
                  language: str = "python",
                  limits: Limits | None = None) -> BetaAsyncFunctionTool[Any]:
    """A ``BetaAsyncFunctionTool`` named ``run_code`` whose programs may call
    ``tools``. ``runtime`` runs them (default: one Runtime of the tool's own
    per event loop, kept for its later calls)."""
    bindings = [_binding(tool) for tool in tools]
    runtimes = _common.Runtimes(runtime)

    async def run_code(code: str) -> str:
        result = await _common.run(runtimes, code, bindings, language=language, limits=limits)
        if not result.ok:
            raise ToolError(_common.failure_text(result))
        return _common.report(result)

    return BetaAsyncFunctionTool(
        run_code, name=_common.RUN_CODE,
        description=_common.description(runtime, bindings, language, limits),
        input_schema=_common.CODE_SCHEMA)


def _binding(tool: AnyTool) -> Binding:
    """``tool`` as a binding declared by its function's own annotations
    (the model reads ``-> Customer``, not ``-> Any``), its result converted
    as every integration converts one. A sync tool stays sync, so tether
    runs it in a thread of its own."""
    parameters: dict[str, Any] = dict(tool.input_schema)
    result: dict[str, Any] | None = None
    try:
        described = describe(tool.func, tool.name)
    except (TypeError, ValueError):
        pass
    else:
        if described.parameters.get("properties", {}).keys() == \
                parameters.get("properties", {}).keys():
            parameters, result = described.parameters, described.result
    if isinstance(tool, BetaAsyncFunctionTool):
        async_tool = tool

        async def call(**arguments: Any) -> Any:
            return _value(await async_tool.call(arguments), tool.name, result)

        function: Any = call
    else:
        sync_tool = tool

        def call_sync(**arguments: Any) -> Any:
            return _value(sync_tool.call(arguments), tool.name, result)

        function = call_sync
    return Binding(name=tool.name, description=tool.description, parameters=parameters,
                   result=result, function=function)


def _value(returned: Any, name: str, declared: dict[str, Any] | None) -> Any:
    """A tool's result as the program's value; a single text block as its
    text (parsed as the declared result type says)."""
    if (isinstance(returned, list) and len(returned) == 1 and isinstance(returned[0], dict)
            and returned[0].get("type") == "text"):
        returned = str(returned[0].get("text", ""))
    return _common.value(returned, name, declared)
