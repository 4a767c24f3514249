"""LangChain and LangGraph: a ``run_code`` StructuredTool whose programs
call other tools, and an agent middleware that folds an agent's tools into
it.

``run_code_tool([get_weather, get_population])`` is a tool for any agent or
graph; ``create_agent(model, tools=[...], middleware=[TetherCodeMode()])``
offers the model ``run_code`` in place of the agent's tools, whose calls
still run those tools, through the agent's tool node. A program that fails
the check before the run, or ends without a value, gives the model the
reason as the tool's output.

A tool the agent's ``HumanInTheLoopMiddleware`` guards keeps its guard: a
program's call of it pauses the agent with the middleware's own interrupt
(or the one the tool raises itself), and once a person decides
(``Command(resume=...)``, in any process) the program goes on from that
call. Each stretch of the program between two such calls is a LangGraph
task, so the run's checkpoint is kept by the agent's checkpointer and the
calls made before the pause are not made again.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import functools
import itertools
import json
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from langchain.agents.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.errors import GraphInterrupt
from langgraph.func import task
from langgraph.prebuilt import ToolNode
from langgraph.runtime import get_runtime
from langgraph.types import Command

from tether.host import Binding, Limits, Runtime, Suspend, describe
from tether.host.run.approvals import DENIED

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

#: A stretch of a program, and a decided call, as LangGraph tasks.
_Stretch = Callable[[bytes | None, dict[str, Any] | None, str], Awaitable[dict[str, Any]]]
_Decide = Callable[[int, str, dict[str, Any]], Awaitable[dict[str, Any]]]

#: Which tools TetherCodeMode folds: names, or a predicate of the tool.
ToolSelection = Sequence[str] | Callable[[BaseTool], bool]


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
        if injects or through is not None:
            if through is None:
                raise RuntimeError(
                    f"{tool.name} takes arguments LangGraph injects (its runtime, state, "
                    "store or tool call id): it runs only in an agent with TetherCodeMode")
            return await through(tool, arguments)
        return _common.value(await tool.ainvoke(arguments), tool.name)

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


def run_code_tool(tools: Sequence[BaseTool], *, runtime: Runtime | None = None,
                  language: str = "python", limits: Limits | None = None) -> StructuredTool:
    """A StructuredTool named ``run_code`` whose programs may call
    ``tools``. ``runtime`` runs them (default: one Runtime of the tool's
    own per event loop, kept for its later calls); the tool also works
    when invoked synchronously, even from a running event loop."""
    runtimes = _common.Runtimes(runtime)
    bindings = bindings_from_tools(tools)

    async def run_code(code: str) -> str:
        result = await _common.run(runtimes, code, bindings, language=language, limits=limits)
        return _common.report(result)

    def run_code_sync(code: str) -> str:
        if runtime is not None:
            raise RuntimeError("run_code with a Runtime runs on its event loop: use ainvoke")
        return _run_sync(lambda: run_code(code))

    return StructuredTool.from_function(
        func=run_code_sync, coroutine=run_code, name=_common.RUN_CODE,
        description=_common.description(runtime, bindings, language, limits))


def _run_sync(coroutine: Callable[[], Coroutine[Any, Any, str]]) -> str:
    """Run the coroutine ``coroutine()`` makes to its end: here, or in a
    worker thread when this thread already runs an event loop (a Jupyter
    cell, async code calling ``invoke``). The coroutine is made where it
    runs, so none is left un-awaited; the worker runs in a copy of this
    thread's context (LangGraph's config is there)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine())
    context = contextvars.copy_context()
    with ThreadPoolExecutor(1, thread_name_prefix="tether-run_code") as worker:
        return worker.submit(context.run, lambda: asyncio.run(coroutine())).result()


class TetherCodeMode(AgentMiddleware[Any, Any, Any]):
    """Offer the model ``run_code`` in place of the agent's tools (or of
    those ``tools`` names or picks); its programs call them, through the
    agent's tool node.

    Each ``run_code`` call may call the tools offered with it, which the
    middleware records in the model's message (``response_metadata``), so
    one agent serves concurrent conversations, each with its own tools.
    ``runtime`` runs the programs (default: a Runtime of the middleware's
    own per event loop; :meth:`aclose` closes it, as does the end of the
    loop). A call of a tool that ``HumanInTheLoopMiddleware`` guards waits
    for its decision, as the module's docstring says; an agent run
    synchronously (``invoke``) refuses such a call instead."""

    def __init__(self, tools: ToolSelection | None = None, *, runtime: Runtime | None = None,
                 language: str = "python", limits: Limits | None = None) -> None:
        super().__init__()
        self._wanted = tools
        self._runtimes = _common.Runtimes(runtime)
        self._sync: _common.SyncRuntimes | None = None
        self._runtime, self._language, self._limits = runtime, language, limits
        # Registers run_code with the agent's tool node; each call runs
        # through (a)wrap_tool_call instead, with the tools offered with it.
        self.tools = [StructuredTool.from_function(
            func=_unreachable, name=_common.RUN_CODE, description="Run a program.")]

    async def aclose(self) -> None:
        """Close the Runtime the middleware made for the running loop, if any."""
        await self._runtimes.aclose()

    def close(self) -> None:
        """Close the Runtime the middleware made for an agent run
        synchronously (``invoke``), if any; otherwise it lives until the
        middleware is collected."""
        if self._sync is not None:
            self._sync.close()

    def _folds(self, tool: BaseTool | dict[str, Any]) -> bool:
        if not isinstance(tool, BaseTool) or tool.name == _common.RUN_CODE:
            return False
        wanted = self._wanted
        if wanted is None:
            return True
        return wanted(tool) if callable(wanted) else tool.name in wanted

    def _offer(self, request: ModelRequest[Any]) -> tuple[ModelRequest[Any], list[str]]:
        folded = [tool for tool in request.tools if isinstance(tool, BaseTool)
                  and self._folds(tool)]
        kept = [tool for tool in request.tools if not self._folds(tool)
                and not (isinstance(tool, BaseTool) and tool.name == _common.RUN_CODE)]
        offered = StructuredTool.from_function(
            func=_unreachable, name=_common.RUN_CODE,
            description=_common.description(self._runtime, bindings_from_tools(folded),
                                            self._language, self._limits))
        return request.override(tools=[*kept, offered]), [tool.name for tool in folded]

    async def awrap_model_call(
        self, request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        offered, names = self._offer(request)
        return _record(await handler(offered), names)

    def wrap_model_call(
        self, request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        offered, names = self._offer(request)
        return _record(handler(offered), names)

    async def awrap_tool_call(
        self, request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        folded = self._folded(request)
        if folded is None:
            return await handler(request)
        if isinstance(folded, ToolMessage):
            return folded
        program = _Program(self, request, folded, handler, _Guard.find(handler))
        return await program.run()

    def wrap_tool_call(
        self, request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        folded = self._folded(request)
        if folded is None:
            return handler(request)
        if isinstance(folded, ToolMessage):
            return folded
        guard = _Guard.find(handler)
        context = contextvars.copy_context()

        async def through(tool: BaseTool, arguments: dict[str, Any]) -> Any:
            if guard.gates(tool.name):
                raise PermissionError(
                    f"{tool.name} needs a person's approval, which an agent run "
                    "synchronously cannot wait for: run it with ainvoke or astream")
            nested, returned = _nested(request, tool, arguments,
                                       f"{request.tool_call['id']}.{next(ids)}")
            response = await asyncio.to_thread(context.run, handler, nested)
            return _answer_value(tool, response, returned)

        ids = itertools.count(1)
        if self._sync is None:
            self._sync = _common.SyncRuntimes(self._runtime)
        bindings = [_binding(tool, through) for tool in folded]
        result = self._sync.run(request.tool_call["args"].get("code", ""), bindings,
                                language=self._language, limits=self._limits)
        return _tool_message(request, _common.report(result))

    def _folded(self, request: ToolCallRequest) -> list[BaseTool] | ToolMessage | None:
        """The tools a ``run_code`` call may call; a refusal when it was not
        offered by this middleware; None for another tool's call."""
        call = request.tool_call
        if call["name"] != _common.RUN_CODE or (request.tool is not None
                                                and request.tool is not self.tools[0]):
            return None
        names = _folded_for(request.state, call["id"])
        if names is None:
            return ToolMessage(
                "run_code was not offered with this call's tools: it cannot run.",
                name=call["name"], tool_call_id=call["id"], status="error")
        available = {tool.name: tool for tool in getattr(request.runtime, "tools", None) or []}
        return [available[name] for name in names if name in available]


def _unreachable(code: str) -> str:
    raise RuntimeError("TetherCodeMode runs run_code in its wrap_tool_call")


def _record(response: ModelResponse[Any], names: list[str]) -> ModelResponse[Any]:
    """``response`` with, in each message calling ``run_code``, the tools
    each of its calls may call."""
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


def _nested(request: ToolCallRequest, tool: BaseTool, arguments: dict[str, Any],
            call_id: str) -> tuple[ToolCallRequest, dict[str, Any]]:
    """A program's call as the tool node runs a model's: a ToolCall of its
    own, with the state, context, store and config injected; and where
    the value the tool returns will be (:func:`_recording`)."""
    recording, returned = _recording(tool)
    nested = request.override(tool=recording, tool_call=ToolCall(
        name=tool.name, args=arguments, id=call_id, type="tool_call"))
    if isinstance(nested.runtime, ToolRuntime):
        nested = dataclasses.replace(
            nested, runtime=dataclasses.replace(nested.runtime, tool_call_id=call_id))
    return nested, returned


def _recording(tool: BaseTool) -> tuple[BaseTool, dict[str, Any]]:
    """A copy of a tool made from a function that keeps what the function
    returns (``returned["value"]``): the tool node gives the model text
    (a pydantic model's repr, say), the program should get the value."""
    returned: dict[str, Any] = {}
    if not isinstance(tool, StructuredTool) or tool.response_format != "content":
        return tool, returned
    update: dict[str, Any] = {}
    if tool.func is not None:
        func = tool.func

        @functools.wraps(func)  # LangChain reads the signature: what it injects
        def keeping(*args: Any, **kwargs: Any) -> Any:
            returned["value"] = value = func(*args, **kwargs)
            return value

        update["func"] = keeping
    if tool.coroutine is not None:
        coroutine = tool.coroutine

        @functools.wraps(coroutine)
        async def keeping_async(*args: Any, **kwargs: Any) -> Any:
            returned["value"] = value = await coroutine(*args, **kwargs)
            return value

        update["coroutine"] = keeping_async
    return tool.model_copy(update=update), returned


def _tool_message(request: ToolCallRequest, text: str) -> ToolMessage:
    call = request.tool_call
    return ToolMessage(text, name=call["name"], tool_call_id=call["id"])


def _answer_value(tool: BaseTool, response: ToolMessage | Command[Any],
                  returned: dict[str, Any]) -> Any:
    """A nested call's ToolMessage as the program's value (see
    :func:`_answer`), or the exception the program's call raises."""
    answer = _answer(tool, response, returned)
    if "error" in answer:
        raise _common.raised(answer["error"]["type"], answer["error"]["message"])
    return answer["value"]


def _answer(tool: BaseTool, response: ToolMessage | Command[Any],
            returned: dict[str, Any]) -> dict[str, Any]:
    """A nested call's answer as data (kept by LangGraph between runs):
    ``{"value": ...}`` or ``{"error": {"type", "message"}}``. The value is
    what the tool returned (``returned``, see :func:`_recording`) when the
    message still says just that (no middleware changed it), else the
    message's content, parsed when it is a JSON object or array. A call
    the reviewer rejected fails with the type approvals' denials have."""
    if not isinstance(response, ToolMessage):
        return {"error": {"type": "RuntimeError", "message": (
            f"{tool.name} returned a {type(response).__name__}, which run_code cannot apply")}}
    text = response.content if isinstance(response.content, str) else str(response.content)
    if response.status == "error":
        decided = (response.additional_kwargs.get("lc_data") or {}).get("decision")
        return {"error": {"type": DENIED if decided == "reject" else "RuntimeError",
                          "message": text}}
    if "value" in returned and not isinstance(returned["value"], str) and \
            response.content in _texts(returned["value"]):
        return {"value": _common.value(returned["value"], tool.name)}
    if isinstance(response.content, str):
        return {"value": _common.json_or_text(response.content)}
    return {"value": _common.value(response.content, tool.name)}


def _texts(value: Any) -> tuple[str, ...]:
    """The content the tool node gives a message for ``value``."""
    try:
        return (json.dumps(value, ensure_ascii=False),)
    except (TypeError, ValueError):
        return (str(value),)


@dataclasses.dataclass(frozen=True)
class _Guard:
    """The agent's HumanInTheLoopMiddleware, if it has one, and whether a
    nested call passes through it (it comes after TetherCodeMode in the
    agent's middleware)."""

    middleware: HumanInTheLoopMiddleware[Any, Any, Any] | None
    inner: bool = False

    @classmethod
    def find(cls, handler: Callable[..., Any]) -> _Guard:
        """The middleware, found through ``handler``, the rest of the tool
        node's chain: middleware never see each other otherwise, and a tool
        the agent guards must not become callable without its guard. The
        tool node at the chain's end holds every middleware's wrapper; a
        chain without one is refused."""
        inner = [found for found in _reachable(handler)
                 if isinstance(found, HumanInTheLoopMiddleware)]
        nodes = [found for found in _reachable(handler) if isinstance(found, ToolNode)]
        if not nodes:
            raise RuntimeError("TetherCodeMode found no tool node behind its handler, so it "
                               "cannot tell which tools need a person's approval")
        every = [found for node in nodes for wrapper in (node._awrap_tool_call,
                                                         node._wrap_tool_call)
                 for found in _reachable(wrapper) if isinstance(found, HumanInTheLoopMiddleware)]
        if inner:
            return cls(inner[0], inner=True)
        return cls(every[0] if every else None)

    def gates(self, name: str) -> bool:
        """Whether calls of ``name`` wait for a person (a ``when`` predicate
        may let some through; the middleware asks it)."""
        return self.middleware is not None and name in self.middleware.interrupt_on

    @property
    def asks_before_the_call(self) -> bool:
        """Whether the program must stop before such a call: the
        middleware will not stop it by itself (it asks after the model in
        ``batched`` mode, and does not see the call when it comes first)."""
        middleware = self.middleware
        return middleware is not None and (middleware.interrupt_mode == "batched"
                                           or not self.inner)


def _reachable(start: object, depth: int = 12) -> Iterator[object]:
    """What the functions of a middleware chain hold: closures, wrapped
    functions, bound methods' objects, a tool node's wrappers."""
    seen: set[int] = set()
    stack = [(start, 0)]
    while stack:
        found, level = stack.pop()
        if id(found) in seen or level > depth:
            continue
        seen.add(id(found))
        yield found
        if isinstance(found, ToolNode):
            continue  # its wrappers are read by _Guard.find, as every middleware's
        for cell in getattr(found, "__closure__", None) or ():
            with contextlib.suppress(ValueError):  # an empty cell has no contents
                stack.append((cell.cell_contents, level + 1))
        for attribute in ("__wrapped__", "__self__", "__func__"):
            held = getattr(found, attribute, None) if callable(found) else None
            if held is not None:
                stack.append((held, level + 1))


class _Program:
    """One ``run_code`` call of an agent: its program, in stretches between
    the calls that wait for a person's decision, each a LangGraph task.

    A task's result is kept by the agent's checkpointer, and a node that
    is run again after an interrupt gets it back instead of running the
    task again: so the run's checkpoint, and each decided call's answer,
    survive the pause, in any process."""

    def __init__(self, mode: TetherCodeMode, request: ToolCallRequest, tools: list[BaseTool],
                 handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
                 guard: _Guard) -> None:
        self.mode, self.request, self.handler, self.guard = mode, request, handler, guard
        self.tools = {tool.name: tool for tool in tools}
        self.call_id = str(request.tool_call["id"])
        self.code = str(request.tool_call["args"].get("code", ""))
        self.ids = itertools.count(1)

    async def run(self) -> ToolMessage:
        # (langgraph's overloads leave these untyped)
        stretch = cast(_Stretch, task(name="tether_run_code")(self._stretch))  # type: ignore[arg-type]
        decide = cast(_Decide, task(name="tether_decide")(self._decide))  # type: ignore[arg-type]
        outcome = await stretch(None, None, "")
        step = 0
        while "checkpoint" in outcome:
            answer = await decide(step, outcome["name"], outcome["args"])
            step += 1
            outcome = await stretch(outcome["checkpoint"], answer, outcome["printed"])
        return _tool_message(self.request, outcome["report"])

    async def _stretch(self, checkpoint: bytes | None, answer: dict[str, Any] | None,
                       printed: str) -> dict[str, Any]:
        """Run the program (or resume it with ``answer`` for the call it
        stopped at) up to its end or its next call that waits for a person.
        ``printed``: what it printed before, which the result carries on."""
        waiting: list[tuple[str, dict[str, Any]]] = []

        async def through(tool: BaseTool, arguments: dict[str, Any]) -> Any:
            if self.guard.asks_before_the_call and self.guard.gates(tool.name):
                waiting.append((tool.name, arguments))
                raise Suspend(f"{tool.name} waits for a person's decision")
            nested, returned = _nested(self.request, tool, arguments,
                                       f"{self.call_id}.{next(self.ids)}")
            try:
                response = await self.handler(nested)
            except GraphInterrupt:
                # The call asks a person (the middleware, or the tool itself):
                # it runs again in a task of its own, where LangGraph waits.
                waiting.append((tool.name, arguments))
                raise Suspend(f"{tool.name} waits for a person's decision") from None
            return _answer_value(tool, response, returned)

        bindings = [_binding(tool, through) for tool in self.tools.values()]
        runtime = await self.mode._runtimes.get()
        if checkpoint is None:
            result = await runtime.run(self.code, language=self.mode._language,
                                       bindings=bindings, limits=self.mode._limits,
                                       check=True, suspendable=True)
        else:
            assert answer is not None
            error = answer.get("error")
            result = await runtime.resume(
                checkpoint, answer.get("value"), bindings=bindings,
                error=None if error is None else _common.raised(error["type"], error["message"]))
        if result.status == "suspended" and waiting:
            assert result.checkpoint is not None
            name, arguments = waiting[0]
            return {"checkpoint": result.checkpoint, "name": name, "args": arguments,
                    "printed": printed + result.output}
        return {"report": _common.report(result, printed)}

    async def _decide(self, step: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The answer to a call that waits for a person: asked with the
        middleware's own interrupt, then (unless refused) the call run."""
        tool = self.tools[name]
        nested, returned = _nested(self.request, tool, arguments,
                                   f"{self.call_id}.approval.{step}")
        middleware = self.guard.middleware
        if middleware is not None and self.guard.gates(name):
            if middleware.interrupt_mode == "batched":
                return await self._batched(middleware, nested, returned)
            if not self.guard.inner:
                response = await middleware.awrap_tool_call(nested, self.handler)
                return _answer(tool, response, returned)
        return _answer(tool, await self.handler(nested), returned)

    async def _batched(self, middleware: HumanInTheLoopMiddleware[Any, Any, Any],
                       nested: ToolCallRequest, returned: dict[str, Any]) -> dict[str, Any]:
        """Ask as the middleware asks about a model's calls (after the
        model, all of a message's calls in one interrupt): about this one."""
        call = nested.tool_call
        state = nested.state if isinstance(nested.state, dict) else {}
        asked = {**state, "messages": [*(state.get("messages") or []),
                                       AIMessage("", tool_calls=[call])]}
        update = middleware.after_model(asked, get_runtime())  # type: ignore[arg-type]
        if update is not None:
            for message in update.get("messages", []):
                if isinstance(message, ToolMessage) and message.tool_call_id == call["id"]:
                    return _answer(self.tools[call["name"]], message, {})  # refused or answered
            edited = (update.get("hitl_edited_tool_calls") or {}).get(call["id"])
            if edited is not None:
                tool = self.tools.get(edited["name"])
                if tool is None:
                    return {"error": {"type": "RuntimeError", "message": (
                        f"the reviewer edited the call into {edited['name']}, "
                        "which this program may not call")}}
                nested, returned = _nested(self.request, tool, dict(edited["args"]),
                                           str(call["id"]))
        assert nested.tool is not None
        return _answer(nested.tool, await self.handler(nested), returned)


def codeact_eval_fn(*, runtime: Runtime | None = None,
                    limits: Limits | None = None) -> CodeActEval:
    """An ``eval_fn`` for langgraph-codeact's ``create_codeact``: each script
    runs in a fresh tether guest. The context's callables (the tools) are
    its bindings and its other entries (what earlier scripts left) its
    variables; the script's top-level names at its end that are values
    come back as the new variables. Its tools are called as CodeAct's prompt
    shows them; with ``await`` they may run at once (``asyncio.gather``).
    The output is what it printed, and why it failed if it did."""
    runtimes = _common.Runtimes(runtime)

    async def eval_fn(code: str, context: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        tools = {name: value for name, value in context.items() if callable(value)}
        values = {name: value for name, value in context.items() if name not in tools}
        result = await _common.run(runtimes, awaited(code, set(tools)), tools, limits=limits,
                                   variables=values)
        output = result.output if result.ok else _common.failure_text(result)
        return output, dict(result.variables or {})

    return eval_fn
