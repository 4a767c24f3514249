"""pydantic-ai: a capability that folds the agent's tools into one
``run_code`` tool run by tether.

``Agent(model, tools=[...], capabilities=[TetherCodeMode()])``: the model
sees ``run_code``, whose description declares the agent's other tools as
functions; the program it writes runs in a fresh tether guest, and each
call it makes goes through the agent's own tool machinery (argument
validation, retries, dependencies, capability hooks). A program that fails
the check before the run, or ends in an error, comes back to the model as a
retry; nothing ran for the first. Only function tools are folded: tools
that need approval, or are deferred, stay ordinary tools, so the agent's
``DeferredToolRequests`` flow still handles them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_ai import AbstractToolset, RunContext, ToolDefinition, WrapperToolset
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ModelRetry, UserError
from pydantic_ai.messages import ToolCallPart, ToolReturn
from pydantic_ai.tool_manager import ToolManager
from pydantic_ai.toolsets.abstract import ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from tether.host import Binding, Limits, Runtime

from . import _common

__all__ = ["TetherCodeMode"]

# Tools that drive the framework itself, or run code themselves, stay native.
_NATIVE_KINDS = frozenset({"tool-search", "capability-load"})


_CODE_VALIDATOR = SchemaValidator(core_schema.typed_dict_schema(
    {"code": core_schema.typed_dict_field(core_schema.str_schema())}))


@dataclass
class TetherCodeMode(AbstractCapability[Any]):
    """Offer the agent's tools to the model as functions of one ``run_code``
    tool, whose programs tether runs.

    ``tools`` names the tools to fold in (default: every one that can be);
    the others stay ordinary tools. ``runtime`` runs the programs (default: a
    Runtime per call). ``language`` is the programs' language, ``limits``
    each run's, ``max_retries`` how often the model may retry ``run_code``.
    """

    tools: Sequence[str] | None = None
    runtime: Runtime | None = None
    language: str = "python"
    limits: Limits | None = None
    max_retries: int = 3

    def __post_init__(self) -> None:
        self._runtimes = _common.Runtimes(self.runtime)

    def get_wrapper_toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any]:
        return _TetherToolset(wrapped=toolset, capability=self)


@dataclass
class _RunCodeTool(ToolsetTool[Any]):
    folded: dict[str, ToolsetTool[Any]] = field(default_factory=dict)


@dataclass
class _TetherToolset(WrapperToolset[Any]):
    capability: TetherCodeMode = field(default_factory=TetherCodeMode)

    def _folds(self, tool: ToolsetTool[Any]) -> bool:
        definition = tool.tool_def
        # A tool that needs approval ("unapproved") or whose result comes
        # from outside the run ("external") ends the run with
        # DeferredToolRequests when called: the agent's flow, which a call
        # from a program cannot take. They stay ordinary tools.
        if definition.kind != "function":
            return False
        if definition.tool_kind in _NATIVE_KINDS or definition.unless_native:
            return False
        if (definition.metadata or {}).get("code_arg_name"):  # itself runs code
            return False
        wanted = self.capability.tools
        return wanted is None or definition.name in wanted

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools = await self.wrapped.get_tools(ctx)
        folded = {name: tool for name, tool in tools.items() if self._folds(tool)}
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
        bindings = [replace(binding, function=_dispatcher(manager, binding.name, order))
                    for binding in _declarations(tool.folded)]
        capability = self.capability
        result = await _common.run(capability._runtimes, tool_args["code"], bindings,
                                   language=capability.language, limits=capability.limits)
        if not result.ok:
            raise ModelRetry(_common.failure_text(result))
        return _common.report(result)


def _declarations(tools: dict[str, ToolsetTool[Any]]) -> list[Binding]:
    """The tools as tether bindings (their functions are set per call)."""
    return [Binding(name=name, description=tool.tool_def.description or "",
                    parameters=tool.tool_def.parameters_json_schema,
                    result=tool.tool_def.return_schema, function=_unset)
            for name, tool in tools.items()]


def _unset(**arguments: Any) -> Any:
    raise RuntimeError("described only")


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


def _dispatcher(manager: ToolManager[Any], name: str, order: _Order) -> Any:
    counter = iter(range(1 << 62))

    async def call(**arguments: Any) -> Any:
        part = ToolCallPart(tool_name=name, args=arguments,
                            tool_call_id=f"tether_{name}_{next(counter)}")
        async with order.turn(manager.is_sequential(part)):
            returned = await manager.handle_call(part, wrap_validation_errors=False)
        if isinstance(returned, ToolReturn):
            returned = returned.return_value
        return _common.jsonable(returned)

    return call
