"""pydantic-ai: a capability that folds the agent's tools into one
``run_code`` tool run by tether.

``Agent(model, tools=[...], capabilities=[TetherCodeMode()])``: the model
sees ``run_code``, whose description declares the agent's other tools as
functions; the program it writes runs in a fresh tether guest, and each
call it makes goes through the agent's own tool machinery (argument
validation, retries, dependencies, capability hooks), shows in the run's
event stream as a ``FunctionToolCallEvent`` and a ``FunctionToolResultEvent``
of its own, and what the program prints as :class:`ProgramPrinted` events.
A program that fails the check before the run, or ends in an error, comes
back to the model as a retry; nothing ran for the first.

A tool that needs approval (``requires_approval``, or one raising
``ApprovalRequired``) is folded too. A program's call of it is resolved by
the agent's ``HandleDeferredToolCalls`` capability when it has one; else
the program is suspended there and the run ends with
``DeferredToolRequests``: ``run_code``'s call waits for approval, its
``metadata`` names the tool and arguments the program called it with and
holds the run's checkpoint. Pass that metadata back with the decision
(``requests.build_results(approvals=..., metadata=requests.metadata)``) and
the program goes on from that call, in any process: approved, the tool runs;
denied, ``run_code`` is not called again (pydantic-ai answers the model with
the denial). Tools whose result comes from outside the run (``external``)
stay ordinary tools.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_ai import AbstractToolset, RunContext, ToolDefinition, WrapperToolset
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ApprovalRequired, ModelRetry, UserError
from pydantic_ai.messages import (
    CustomEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ToolCallPart,
    ToolReturn,
    ToolReturnPart,
)
from pydantic_ai.tool_manager import ToolManager
from pydantic_ai.tools import ToolDenied, ToolSelector, matches_tool_selector
from pydantic_ai.toolsets.abstract import ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from tether.host import Binding, Limits, Printed, RunEvent, RunResult, Runtime, Suspend
from tether.host.run.approvals import DENIED

from . import _common

__all__ = ["ProgramPrinted", "TetherCodeMode"]

# Tools that drive the framework itself, or run code themselves, stay native.
_NATIVE_KINDS = frozenset({"tool-search", "capability-load"})

#: The keys of a waiting ``run_code`` call's metadata that tether reads back.
_CHECKPOINT, _PRINTED = "tether_checkpoint", "tether_printed"

_CODE_VALIDATOR = SchemaValidator(core_schema.typed_dict_schema(
    {"code": core_schema.typed_dict_field(core_schema.str_schema())}))


@dataclass(kw_only=True)
class ProgramPrinted(CustomEvent):
    """Text a ``run_code`` program printed, as it printed it (``stream``:
    ``"stdout"`` or ``"stderr"``); ``tool_call_id`` is ``run_code``'s call."""

    stream: str
    text: str


@dataclass
class TetherCodeMode(AbstractCapability[Any]):
    """Offer the agent's tools to the model as functions of one ``run_code``
    tool, whose programs tether runs.

    ``tools`` picks the tools to fold in (pydantic-ai's ``ToolSelector``:
    ``'all'``, names, metadata to match, or a predicate of the run context
    and the tool's definition); the others stay ordinary tools.
    ``runtime`` runs the programs (default: a Runtime of the capability's
    own per event loop, closed by :meth:`aclose` or with the loop).
    ``language`` is the programs' language, ``limits`` each run's,
    ``max_retries`` how often the model may retry ``run_code``,
    ``max_tool_calls`` how many calls one program may make (later ones
    fail in the program). A program ending with a bare expression returns
    its value.
    """

    tools: ToolSelector[Any] | None = "all"
    runtime: Runtime | None = None
    language: str = "python"
    limits: Limits | None = None
    max_retries: int = 3
    max_tool_calls: int = 100
    _runtimes: _common.Runtimes = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._runtimes = _common.Runtimes(self.runtime)

    async def aclose(self) -> None:
        """Close the Runtime the capability made for the running loop, if any."""
        await self._runtimes.aclose()

    def get_wrapper_toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any]:
        return _TetherToolset(wrapped=toolset, capability=self)


@dataclass
class _RunCodeTool(ToolsetTool[Any]):
    folded: dict[str, ToolsetTool[Any]] = field(default_factory=dict)


@dataclass
class _TetherToolset(WrapperToolset[Any]):
    capability: TetherCodeMode = field(default_factory=TetherCodeMode)

    async def _folds(self, ctx: RunContext[Any], tool: ToolsetTool[Any]) -> bool:
        definition = tool.tool_def
        # A tool whose result comes from outside the run ("external") ends
        # the run with DeferredToolRequests when called, and its result is
        # given back as the call's return: the program could not go on, so
        # it stays an ordinary tool.
        if definition.kind not in ("function", "unapproved"):
            return False
        if definition.tool_kind in _NATIVE_KINDS or definition.unless_native:
            return False
        if (definition.metadata or {}).get("code_arg_name"):  # itself runs code
            return False
        wanted = self.capability.tools
        return wanted is None or await matches_tool_selector(wanted, ctx, definition)

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools = await self.wrapped.get_tools(ctx)
        folded = {name: tool for name, tool in tools.items() if await self._folds(ctx, tool)}
        native = {name: tool for name, tool in tools.items() if name not in folded}
        if _common.RUN_CODE in native:
            raise UserError(f"a tool is named {_common.RUN_CODE!r}: the name TetherCodeMode uses")
        capability = self.capability
        text = _common.description(capability.runtime, _declarations(folded),
                                   capability.language, capability.limits)
        run_code = _RunCodeTool(
            toolset=self,
            tool_def=ToolDefinition(
                name=_common.RUN_CODE, description=text,
                parameters_json_schema=_common.CODE_SCHEMA,
                metadata={"code_arg_name": "code", "code_arg_language": capability.language}),
            max_retries=capability.max_retries, args_validator=_CODE_VALIDATOR, folded=folded)
        return {**native, _common.RUN_CODE: run_code}

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any],
                        tool: ToolsetTool[Any]) -> Any:
        if not isinstance(tool, _RunCodeTool):
            return await self.wrapped.call_tool(name, tool_args, ctx, tool)
        parent = ctx.tool_manager
        if parent is None:
            raise UserError("run_code was called outside an agent run")
        # The nested calls go through a ToolManager of the wrapped tools, so
        # validation, retries and the agent's capability hooks apply to each.
        manager = ToolManager(toolset=self.wrapped, root_capability=parent.root_capability,
                              ctx=ctx, tools=tool.folded)
        # Calls of sequential tools (or every call, in a run in sequential
        # mode) run alone, as pydantic-ai runs a model's calls.
        order = _Order(every_call_alone=parent.get_parallel_execution_mode() == "sequential")
        program = _Program(self.capability, ctx, manager, order, tool.folded)
        waiting = ctx.tool_call_metadata if ctx.tool_call_approved else None
        if ctx.tool_call_approved and not (isinstance(waiting, dict) and _CHECKPOINT in waiting):
            # Run again from the start, the program would make again every
            # call it made before the one that waited.
            raise UserError("run_code was approved without the metadata of its deferred "
                            "request: pass requests.build_results(approvals=..., "
                            "metadata=requests.metadata), so that the program resumes "
                            "where it waited")
        if isinstance(waiting, dict):
            result, printed = await program.resume(tool_args["code"], waiting)
        else:
            result, printed = await program.run(tool_args["code"]), ""
        return program.outcome(result, printed)


def _declarations(tools: dict[str, ToolsetTool[Any]]) -> list[Binding]:
    """The tools as tether bindings (their functions are set per call)."""
    return [Binding(name=name, description=tool.tool_def.description or "",
                    parameters=tool.tool_def.parameters_json_schema,
                    result=tool.tool_def.return_schema, function=_unset)
            for name, tool in tools.items()]


def _unset(**arguments: Any) -> Any:
    raise RuntimeError("described only")


class _Program:
    """One ``run_code`` call: its program's run (or its resumption after
    an approval), each call it makes dispatched through ``manager`` and
    shown in the run's event stream."""

    def __init__(self, capability: TetherCodeMode, ctx: RunContext[Any],
                 manager: ToolManager[Any], order: _Order,
                 tools: dict[str, ToolsetTool[Any]]) -> None:
        self.capability, self.ctx, self.manager, self.order = capability, ctx, manager, order
        self.tools = tools
        self.ids = itertools.count()
        self.budget = capability.max_tool_calls
        #: The call that waits for approval: its name, arguments and metadata.
        self.waiting: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = []

    def bindings(self) -> list[Binding]:
        return [replace(binding, function=self._dispatcher(binding.name))
                for binding in _declarations(self.tools)]

    async def run(self, code: str) -> RunResult:
        runtime = await self.capability._runtimes.get()
        return await runtime.run(code, language=self.capability.language,
                                 bindings=self.bindings(), limits=self.capability.limits,
                                 check=True, last_expression=True, suspendable=True,
                                 on_event=self._printed)

    async def resume(self, code: str, waiting: dict[str, Any]) -> tuple[RunResult, str]:
        """Go on with the program from the approved call ``waiting`` names,
        the call made now with the approval given."""
        name, arguments = str(waiting["tool_name"]), dict(waiting["args"])
        value: Any = None
        error: BaseException | None = None
        try:
            value = await self._call(name, arguments, approved=True)
        except Exception as exc:  # the program's call fails as the tool did
            error = exc
        runtime = await self.capability._runtimes.get()
        checkpoint = base64.b64decode(str(waiting[_CHECKPOINT]))
        result = await runtime.resume(checkpoint, value, error=error, bindings=self.bindings(),
                                      on_event=self._printed)
        return result, str(waiting.get(_PRINTED, ""))

    def outcome(self, result: RunResult, printed: str) -> str:
        """What ``run_code`` answers: the report; raises ModelRetry for a
        program that failed, ApprovalRequired for one that waits."""
        if result.status == "suspended" and self.waiting and result.checkpoint is not None:
            name, arguments, metadata = self.waiting[0]
            raise ApprovalRequired(metadata={
                "tool_name": name, "args": arguments, "metadata": metadata,
                _CHECKPOINT: base64.b64encode(result.checkpoint).decode(),
                _PRINTED: printed + result.output})
        if not result.ok:
            raise ModelRetry(_common.failure_text(result, printed))
        return _common.report(result, printed)

    def _printed(self, event: RunEvent) -> None:
        if isinstance(event, Printed):
            self._emit(ProgramPrinted(stream=event.stream, text=event.text,
                                      tool_call_id=self.ctx.tool_call_id,
                                      tool_name=self.ctx.tool_name))

    def _emit(self, event: Any) -> None:
        # pydantic-ai drains the run's event buffer into its event stream
        # (event_stream_handler, run_stream_events, iter); there is no
        # public way to put a tool-call event there.
        if self.ctx._event_stream_buffer is not None:
            self.ctx._emit_event(event)

    def _dispatcher(self, name: str) -> Callable[..., Any]:
        async def call(**arguments: Any) -> Any:
            if self.budget <= 0:
                raise RuntimeError(f"this program made {self.capability.max_tool_calls} tool "
                                   "calls, as many as one run_code call may make")
            self.budget -= 1
            try:
                return await self._call(name, arguments)
            except ApprovalRequired as exc:
                self.waiting.append((name, arguments, exc.metadata))
                raise Suspend(f"{name} waits for approval") from None

        return call

    async def _call(self, name: str, arguments: dict[str, Any], *,
                    approved: bool = False) -> Any:
        part = ToolCallPart(tool_name=name, args=arguments,
                            tool_call_id=f"{self.ctx.tool_call_id}__{next(self.ids)}")
        self._emit(FunctionToolCallEvent(part))
        try:
            async with self.order.turn(self.manager.is_sequential(part)):
                returned = await self.manager.handle_call(part, approved=approved,
                                                          wrap_validation_errors=False)
        except ApprovalRequired:
            raise
        except Exception as exc:
            self._emit(FunctionToolResultEvent(ToolReturnPart(
                tool_name=name, content=f"{type(exc).__name__}: {exc}",
                tool_call_id=part.tool_call_id, outcome="failed")))
            raise
        if isinstance(returned, ToolDenied):
            self._emit(FunctionToolResultEvent(ToolReturnPart(
                tool_name=name, content=returned.message, tool_call_id=part.tool_call_id,
                outcome="denied")))
            raise _common.raised(DENIED, returned.message)
        if isinstance(returned, ToolReturn):
            returned = returned.return_value
        value = _common.value(returned, name, self.tools[name].tool_def.return_schema)
        self._emit(FunctionToolResultEvent(ToolReturnPart(
            tool_name=name, content=value, tool_call_id=part.tool_call_id)))
        return value


class _Order:
    """One program's tool calls, in the order they arrive: a call of a
    sequential tool (a barrier) starts once every call before it has
    ended, and the calls after it once it has; others overlap freely.
    pydantic-ai orders a model's calls so (``sequential=True``, and the
    run-scoped ``parallel_execution_mode('sequential')``)."""

    def __init__(self, *, every_call_alone: bool = False) -> None:
        self.every_call_alone = every_call_alone
        self._running: set[asyncio.Event] = set()  # since the last barrier
        self._barrier: asyncio.Event | None = None
        self._ending: set[asyncio.Task[None]] = set()

    @asynccontextmanager
    async def turn(self, alone: bool) -> AsyncIterator[None]:
        ended = asyncio.Event()
        before = [self._barrier] if self._barrier is not None else []
        if alone or self.every_call_alone:
            before += self._running
            self._running, self._barrier = set(), ended
        else:
            self._running.add(ended)
        try:
            for event in before:
                await event.wait()
        except BaseException:
            # Cancelled while waiting: those after it still wait for those
            # before it.
            task = asyncio.get_running_loop().create_task(_end_after(before, ended))
            self._ending.add(task)
            task.add_done_callback(self._ending.discard)
            raise
        try:
            yield
        finally:
            ended.set()
            self._running.discard(ended)
            if self._barrier is ended:
                self._barrier = None


async def _end_after(before: list[asyncio.Event], ended: asyncio.Event) -> None:
    for event in before:
        await event.wait()
    ended.set()
