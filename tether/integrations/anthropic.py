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

from tether.host import Binding, Limits, Runtime

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
    """A sync tool stays sync, so tether runs it in a thread of its own."""
    if isinstance(tool, BetaAsyncFunctionTool):
        async_tool = tool

        async def call(**arguments: Any) -> Any:
            return _value(await async_tool.call(arguments))

        function: Any = call
    else:
        sync_tool = tool

        def call_sync(**arguments: Any) -> Any:
            return _value(sync_tool.call(arguments))

        function = call_sync
    return Binding(name=tool.name, description=tool.description,
                   parameters=dict(tool.input_schema), function=function)


def _value(result: Any) -> Any:
    """A tool's result (text, or content blocks) as a value: JSON text
    parsed, a single text block as its text."""
    if isinstance(result, str):
        return _common.json_or_text(result)
    if (isinstance(result, list) and len(result) == 1 and isinstance(result[0], dict)
            and result[0].get("type") == "text"):
        return _common.json_or_text(str(result[0].get("text", "")))
    return result
