"""LangChain and LangGraph: a ``run_code`` StructuredTool whose programs
call other tools, and an agent middleware that folds an agent's tools into
it.

``run_code_tool([get_weather, get_population])`` is a tool for any agent or
graph; ``create_agent(model, tools=[...], middleware=[TetherCodeMode()])``
offers the model ``run_code`` in place of the agent's tools, whose calls
still run those tools (``ainvoke``). A program that fails the check before
the run, or ends without a value, gives the model the reason as the tool's
output.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from tether.host import Binding, Limits, Runtime, describe

from . import _common
from ._awaited import awaited

__all__ = ["TetherCodeMode", "bindings_from_tools", "codeact_eval_fn", "run_code_tool"]

#: langgraph-codeact's ``eval_fn`` (async form): ``(code, context) ->
#: (output, new variables)``.
CodeActEval = Callable[[str, dict[str, Any]], Awaitable[tuple[str, dict[str, Any]]]]


def bindings_from_tools(tools: Sequence[BaseTool]) -> list[Binding]:
    """LangChain tools as bindings: their schema as the model sees it, each
    call through ``ainvoke``."""
    return [_binding(tool) for tool in tools]


def _binding(tool: BaseTool) -> Binding:
    async def call(**arguments: Any) -> Any:
        return await tool.ainvoke(arguments)

    # A tool made from a function is described from the function, as tether
    # describes any binding (its return type and Args: section included);
    # any other tool by the schema LangChain gives the model.
    schema = convert_to_openai_tool(tool)["function"]
    parameters = schema.get("parameters", {"type": "object"})
    function = getattr(tool, "coroutine", None) or getattr(tool, "func", None)
    if function is not None:
        try:
            described = describe(function, tool.name)
        except (TypeError, ValueError):  # e.g. an injected argument
            pass
        else:
            if described.parameters.get("properties", {}).keys() == parameters.get(
                    "properties", {}).keys():
                return Binding(name=tool.name, description=described.doc or tool.description,
                               parameters=described.parameters, result=described.result,
                               function=call)
    return Binding(name=tool.name, description=schema.get("description", ""),
                   parameters=parameters, function=call)


def run_code_tool(tools: Sequence[BaseTool] | Callable[[], Sequence[BaseTool]], *,
                  runtime: Runtime | None = None, language: str = "python",
                  limits: Limits | None = None) -> StructuredTool:
    """A StructuredTool named ``run_code`` whose programs may call
    ``tools`` (or the tools a callable returns at each call). ``runtime``
    runs them (default: a Runtime per call); without one the tool also
    works when invoked synchronously."""
    current = tools if callable(tools) else (lambda: tools)

    async def run_code(code: str) -> str:
        result = await _common.run(runtime, code, bindings_from_tools(current()),
                                   language=language, limits=limits)
        return _common.report(result)

    def run_code_sync(code: str) -> str:
        if runtime is not None:
            raise RuntimeError("run_code with a Runtime runs on its event loop: use ainvoke")
        return asyncio.run(run_code(code))

    described = [] if callable(tools) else bindings_from_tools(tools)
    return StructuredTool.from_function(
        func=run_code_sync, coroutine=run_code, name=_common.RUN_CODE,
        description=_common.description(runtime, described, language, limits))


class TetherCodeMode(AgentMiddleware[Any, Any, Any]):
    """Offer the model ``run_code`` in place of the agent's tools (or of
    those named in ``tools``); its programs call them. The agent must run
    asynchronously (``ainvoke``, ``astream``)."""

    def __init__(self, tools: Sequence[str] | None = None, *, runtime: Runtime | None = None,
                 language: str = "python", limits: Limits | None = None) -> None:
        super().__init__()
        self._names = None if tools is None else frozenset(tools)
        self._runtime, self._language, self._limits = runtime, language, limits
        # The tools the last model request offered, which run_code's calls run.
        self._folded: list[BaseTool] = []
        self.tools = [run_code_tool(lambda: self._folded, runtime=runtime, language=language,
                                    limits=limits)]

    def _folds(self, tool: BaseTool | dict[str, Any]) -> bool:
        return (isinstance(tool, BaseTool) and tool.name != _common.RUN_CODE
                and (self._names is None or tool.name in self._names))

    async def awrap_model_call(
        self, request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        folded = [tool for tool in request.tools if isinstance(tool, BaseTool)
                  and self._folds(tool)]
        kept = [tool for tool in request.tools if not self._folds(tool)
                and not (isinstance(tool, BaseTool) and tool.name == _common.RUN_CODE)]
        self._folded = folded
        offered = run_code_tool(folded, runtime=self._runtime, language=self._language,
                                limits=self._limits)
        return await handler(request.override(tools=[*kept, offered]))


def codeact_eval_fn(*, runtime: Runtime | None = None,
                    limits: Limits | None = None) -> CodeActEval:
    """An ``eval_fn`` for langgraph-codeact's ``create_codeact``: each script
    runs in a fresh tether guest. The context's callables (the tools) are
    its bindings and its other entries (what earlier scripts left) its
    variables; the script's top-level names at its end that are values
    come back as the new variables. Its tools are called as CodeAct's prompt
    shows them; with ``await`` they may run at once (``asyncio.gather``).
    The output is what it printed, and why it failed if it did."""
    async def eval_fn(code: str, context: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        tools = {name: value for name, value in context.items() if callable(value)}
        values = {name: value for name, value in context.items() if name not in tools}
        result = await _common.run(runtime, awaited(code, set(tools)), tools, limits=limits,
                                   variables=values)
        output = result.output if result.ok else _common.failure_text(result)
        return output, dict(result.variables or {})

    return eval_fn
