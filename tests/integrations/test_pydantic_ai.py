"""TetherCodeMode in a real pydantic-ai Agent, driven by FunctionModel."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="the pydantic-ai extra is not installed")

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tether.integrations.pydantic_ai import TetherCodeMode

from .scenario import CONCURRENT, RETURNED, TYPE_ERROR, Tools


def scripted(programs: list[str], seen: list[Any], infos: list[AgentInfo]) -> FunctionModel:
    """Writes each program in turn as a run_code call, then answers with
    what the last one gave back."""
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        infos.append(info)
        last = messages[-1]
        if isinstance(last, ModelRequest):
            for part in last.parts:
                if isinstance(part, ToolReturnPart | RetryPromptPart):
                    seen.append(part)
        if programs:
            return ModelResponse(parts=[ToolCallPart("run_code", {"code": programs.pop(0)})])
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(respond)


def agent_with(tools: Tools, programs: list[str], seen: list[Any],
               infos: list[AgentInfo]) -> Agent[None, str]:
    return Agent(scripted(programs, seen, infos), tools=tools.functions(),
                 capabilities=[TetherCodeMode()])


def test_the_model_sees_one_tool_declaring_the_others() -> None:
    tools, seen, infos = Tools(), [], []
    asyncio.run(agent_with(tools, [], seen, infos).run("hi"))
    (run_code,) = infos[0].function_tools
    assert run_code.name == "run_code"
    assert "async def get_weather(*, city: str)" in (run_code.description or "")
    assert "How many people live in a city." in (run_code.description or "")


def test_a_program_calls_two_tools_at_once() -> None:
    tools, seen, infos = Tools(), [], []
    result = asyncio.run(agent_with(tools, [CONCURRENT], seen, infos).run("weather?"))
    assert result.output == "done"
    assert sorted(tools.calls) == [("get_population", {"city": "Oslo"}),
                                   ("get_weather", {"city": "Oslo"})]
    (returned,) = seen
    assert isinstance(returned, ToolReturnPart)
    assert returned.content == f"Printed:\nsky: overcast\nReturned: {RETURNED}"


def test_a_type_error_is_a_retry_before_anything_runs() -> None:
    tools, seen, infos = Tools(), [], []
    asyncio.run(agent_with(tools, [TYPE_ERROR], seen, infos).run("people?"))
    assert tools.calls == []
    (retry,) = seen
    # pydantic-ai gives a ModelRetry back as a tool return marked "retried".
    assert isinstance(retry, ToolReturnPart)
    assert retry.outcome == "retried"
    assert "not run: the check found problems" in str(retry.content)
    assert "line 1" in str(retry.content)
