"""run_code_tool in a real OpenAI Agents SDK Agent, driven by a scripted
Model (the SDK's model interface, answering without a network)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("agents", reason="the openai-agents extra is not installed")

from agents import Agent, FunctionTool, RunConfig, Runner, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from tether.integrations.openai_agents import code_mode, run_code_tool

from .scenario import CONCURRENT, RETURNED, TYPE_ERROR, Tools


class Scripted(Model):
    """Calls run_code with each program in turn, then answers "done"; keeps
    the tools it was offered and the tool outputs it read."""

    def __init__(self, programs: list[str]) -> None:
        self.programs = programs
        self.offered: list[Any] = []
        self.outputs: list[str] = []

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        # The SDK passes every argument by keyword.
        input, tools = kwargs["input"], kwargs["tools"]
        self.offered = list(tools)
        if isinstance(input, list):
            self.outputs = [item["output"] for item in input if isinstance(item, dict)
                            and item.get("type") == "function_call_output"]
        if self.programs:
            code = self.programs.pop(0)
            item: Any = ResponseFunctionToolCall(
                type="function_call", call_id=f"call_{len(self.outputs)}", name="run_code",
                arguments=json.dumps({"code": code}))
        else:
            item = ResponseOutputMessage(
                id="msg", type="message", role="assistant", status="completed",
                content=[ResponseOutputText(type="output_text", text="done", annotations=[])])
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


def function_tools(tools: Tools) -> list[FunctionTool]:
    return [function_tool(f) for f in tools.functions()]


def play(programs: list[str], tool: FunctionTool) -> tuple[Scripted, Any]:
    model = Scripted(programs)
    agent = Agent(name="a", instructions="Use run_code.", model=model, tools=[tool])
    result = asyncio.run(Runner.run(agent, "weather?",
                                    run_config=RunConfig(tracing_disabled=True)))
    return model, result


def test_a_program_calls_two_tools_at_once() -> None:
    tools = Tools()
    model, result = play([CONCURRENT], run_code_tool(function_tools(tools)))
    assert result.final_output == "done"
    (offered,) = model.offered
    assert offered.name == "run_code"
    assert "async def get_weather(*, city: str)" in offered.description
    assert sorted(tools.calls) == [("get_population", {"city": "Oslo"}),
                                   ("get_weather", {"city": "Oslo"})]
    assert model.outputs == [f"Printed:\nsky: overcast\nReturned: {RETURNED}"]


def test_a_type_error_comes_back_before_anything_runs() -> None:
    tools = Tools()
    model, _ = play([TYPE_ERROR], run_code_tool(function_tools(tools)))
    assert tools.calls == []
    (output,) = model.outputs
    assert output.startswith("The program was not run: the check found problems.")
    assert "line 1" in output


def test_needs_approval_goes_to_approve() -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    def remove(path: str) -> str:
        """Remove a file."""
        return f"removed {path}"

    guarded = function_tool(remove, needs_approval=True)
    program = """
try:
    first = await remove(path="a")
except BindingError as exc:
    first = exc.type
return [first, await remove(path="b")]
"""

    def approve(name: str, arguments: dict[str, Any]) -> bool:
        asked.append((name, arguments))
        return arguments["path"] == "b"

    model, _ = play([program], run_code_tool([guarded], approve=approve))
    assert asked == [("remove", {"path": "a"}), ("remove", {"path": "b"})]
    assert model.outputs == ['Returned: ["PermissionError", "removed b"]']


def test_code_mode_folds_an_agents_function_tools() -> None:
    tools = Tools()
    model = Scripted([CONCURRENT])
    agent = code_mode(Agent(name="a", model=model, tools=function_tools(tools)))
    asyncio.run(Runner.run(agent, "weather?", run_config=RunConfig(tracing_disabled=True)))
    assert [t.name for t in model.offered] == ["run_code"]
    assert model.outputs == [f"Printed:\nsky: overcast\nReturned: {RETURNED}"]
