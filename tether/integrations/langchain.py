"""LangChain and LangGraph: a ``run_code`` StructuredTool whose programs
call other tools, and an agent middleware that folds an agent's tools into
it.

``run_code_tool([get_weather, get_population])`` is a tool for any agent or
graph; ``create_agent(model, tools=[...], middleware=[TetherCodeMode()])``
offers the model ``run_code`` in place of the agent's tools, whose calls
still run those tools. A program that fails the check before the run, or
ends without a value, gives the model the reason as the tool's output.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain.agents.middleware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.types import Command

from tether.host import Binding, Limits, Runtime, describe

from . import _common
from ._awaited import awaited

__all__ = ["TetherCodeMode", "bindings_from_tools", "codeact_eval_fn", "run_code_tool"]

#: langgraph-codeact's ``eval_fn`` (async form): ``(code, context) ->
#: (output, new variables)``.
CodeActEval = Callable[[str, dict[str, Any]], Awaitable[tuple[str, dict[str, Any]]]]

#: Runs one call of a tool as LangGraph's tool node runs the model's calls
#: (arguments injected), giving back the value the program gets.
_Through = Callable[[BaseTool, dict[str, Any]], Awaitable[Any]]

#: The key, in the ``response_metadata`` of the model's message, under which
#: TetherCodeMode records the tools each of its ``run_code`` calls may call.
_FOLDED = "tether_folded_tools"


def bindings_from_tools(tools: Sequence[BaseTool]) -> list[Binding]:
    """LangChain tools as bindings: their schema as the model sees it, each
    call through ``ainvoke``. A tool with arguments LangGraph injects (a
    ``ToolRuntime``, ``InjectedState``, ...) runs only under
    :class:`TetherCodeMode`, which calls it through the agent's tool node."""
    return [_binding(tool, None) for tool in tools]


def _injects(tool: BaseTool) -> bool:
    """Whether some of ``tool``'s arguments are injected, not the model's."""
    fields = getattr(tool.get_input_schema(), "model_fields", None) or {}
    return bool(set(fields) - set(tool.args))


def _binding(tool: BaseTool, through: _Through | None) -> Binding:
    injects = _injects(tool)

    async def call(**arguments: Any) -> Any:
        if injects:
            if through is None:
                raise RuntimeError(
                    f"{tool.name} takes arguments LangGraph injects (its runtime, state, "
                    "store or tool call id): it runs only in an agent with TetherCodeMode")
            return await through(tool, arguments)
        return _common.jsonable(await tool.ainvoke(arguments))

    # A tool made from a function is described from the function, as tether
    # describes any binding (its return type and Args: section included);
    # any other tool by the schema LangChain gives the model, which leaves
    # out injected arguments.
    schema = convert_to_openai_tool(tool)["function"]
    parameters = schema.get("parameters", {"type": "object"})
    function = getattr(tool, "coroutine", None) or getattr(tool, "func", None)
    if function is not None and not injects:
        try:
            described = describe(function, tool.name)
        except (TypeError, ValueError):
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
    works when invoked synchronously, even from a running event loop."""
    return _run_code_tool(tools, None, runtime=runtime, language=language, limits=limits)


def _run_code_tool(tools: Sequence[BaseTool] | Callable[[], Sequence[BaseTool]],
                   through: _Through | None, *, runtime: Runtime | None, language: str,
                   limits: Limits | None) -> StructuredTool:
    current = tools if callable(tools) else (lambda: tools)

    async def run_code(code: str) -> str:
        bindings = [_binding(tool, through) for tool in current()]
        result = await _common.run(runtime, code, bindings, language=language, limits=limits)
        return _common.report(result)

    def run_code_sync(code: str) -> str:
        if runtime is not None:
            raise RuntimeError("run_code with a Runtime runs on its event loop: use ainvoke")
        return _run_sync(lambda: run_code(code))

    described = [] if callable(tools) else bindings_from_tools(tools)
    return StructuredTool.from_function(
        func=run_code_sync, coroutine=run_code, name=_common.RUN_CODE,
        description=_common.description(runtime, described, language, limits))


def _run_sync(coroutine: Callable[[], Coroutine[Any, Any, str]]) -> str:
    """Run the coroutine ``coroutine()`` makes to its end: here, or in a
    worker thread when this thread already runs an event loop (a Jupyter
    cell, async code calling ``invoke``). The coroutine is made where it
    runs, so none is left un-awaited."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine())
    with ThreadPoolExecutor(1, thread_name_prefix="tether-run_code") as worker:
        return worker.submit(lambda: asyncio.run(coroutine())).result()


class TetherCodeMode(AgentMiddleware[Any, Any, Any]):
    """Offer the model ``run_code`` in place of the agent's tools (or of
    those named in ``tools``); its programs call them, through the agent's
    tool node. The agent must run asynchronously (``ainvoke``,
    ``astream``).

    Each ``run_code`` call may call the tools offered with it, which the
    middleware records in the model's message (``response_metadata``), so
    one agent serves concurrent conversations, each with its own tools."""

    def __init__(self, tools: Sequence[str] | None = None, *, runtime: Runtime | None = None,
                 language: str = "python", limits: Limits | None = None) -> None:
        super().__init__()
        self._names = None if tools is None else frozenset(tools)
        self._runtime, self._language, self._limits = runtime, language, limits
        # Registers run_code with the agent's tool node; each call runs
        # through awrap_tool_call instead, with the tools offered with it.
        self.tools = [_run_code_tool(_unreachable, None, runtime=runtime, language=language,
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
        offered = run_code_tool(folded, runtime=self._runtime, language=self._language,
                                limits=self._limits)
        response = await handler(request.override(tools=[*kept, offered]))
        names = [tool.name for tool in folded]
        for message in response.result:
            if not isinstance(message, AIMessage):
                continue
            calls = [call["id"] for call in message.tool_calls
                     if call["name"] == _common.RUN_CODE and call["id"]]
            if calls:
                recorded = message.response_metadata.get(_FOLDED) or {}
                message.response_metadata[_FOLDED] = {
                    **recorded, **{call_id: names for call_id in calls}}
        return response

    async def awrap_tool_call(
        self, request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        call = request.tool_call
        if call["name"] != _common.RUN_CODE or (request.tool is not None
                                                and request.tool is not self.tools[0]):
            return await handler(request)
        names = _folded_for(request.state, call["id"])
        if names is None:
            return ToolMessage(
                "run_code was not offered with this call's tools: it cannot run.",
                name=call["name"], tool_call_id=call["id"], status="error")
        available = {tool.name: tool for tool in getattr(request.runtime, "tools", None) or []}
        tools = [available[name] for name in names if name in available]
        numbers = itertools.count(1)

        async def through(tool: BaseTool, arguments: dict[str, Any]) -> Any:
            # As the tool node runs the model's calls: a ToolCall of its own,
            # with the state, context, store and config injected.
            call_id = f"{call['id']}.{next(numbers)}"
            nested = request.override(tool=tool, tool_call=ToolCall(
                name=tool.name, args=arguments, id=call_id, type="tool_call"))
            if isinstance(nested.runtime, ToolRuntime):
                nested = dataclasses.replace(
                    nested, runtime=dataclasses.replace(nested.runtime, tool_call_id=call_id))
            return _value(tool, await handler(nested))

        run_code = _run_code_tool(tools, through, runtime=self._runtime,
                                  language=self._language, limits=self._limits)
        return await handler(request.override(tool=run_code))


def _unreachable() -> Sequence[BaseTool]:
    raise RuntimeError("TetherCodeMode runs run_code in awrap_tool_call: "
                       "run the agent asynchronously (ainvoke, astream)")


def _folded_for(state: Any, call_id: str | None) -> list[str] | None:
    """The names of the tools offered with the ``run_code`` call
    ``call_id``: recorded in the model message that made it."""
    messages = (state.get("messages") if isinstance(state, dict)
                else getattr(state, "messages", None)) or []
    for message in reversed(messages):
        if isinstance(message, AIMessage) and any(
                call["id"] == call_id for call in message.tool_calls):
            names = (message.response_metadata.get(_FOLDED) or {}).get(call_id)
            return None if names is None else [str(name) for name in names]
    return None


def _value(tool: BaseTool, response: ToolMessage | Command[Any]) -> Any:
    """A nested call's ToolMessage as the program's value: its content,
    parsed when it is a JSON object or array."""
    if not isinstance(response, ToolMessage):
        raise RuntimeError(f"{tool.name} returned a {type(response).__name__}, "
                           "which run_code cannot apply")
    if response.status == "error":
        raise RuntimeError(str(response.content))
    if isinstance(response.content, str):
        return _common.json_or_text(response.content)
    return _common.jsonable(response.content)


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
