"""run_code_tool and the TetherCodeMode middleware in a real LangChain
agent (create_agent, a LangGraph graph), driven by LangChain's fake chat
model taught to accept tools."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

pytest.importorskip("langchain", reason="the langchain extra is not installed")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from pydantic import Field

from tether.integrations.langchain import TetherCodeMode, codeact_eval_fn, run_code_tool

from .scenario import CONCURRENT, RETURNED, TYPE_ERROR, Tools


class ToolCallingFake(GenericFakeChatModel):
    """The fake chat model, keeping the tools it is bound to."""

    bound: list[list[Any]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        self.bound.append(list(tools))
        return self


def model_writing(programs: list[str]) -> ToolCallingFake:
    replies = [AIMessage("", tool_calls=[{"name": "run_code", "args": {"code": code},
                                          "id": f"call_{i}"}])
               for i, code in enumerate(programs)]
    return ToolCallingFake(messages=iter([*replies, AIMessage("done")]))


def lc_tools(tools: Tools) -> list[BaseTool]:
    return [tool(f) for f in tools.functions()]


def play(programs: list[str], tools: Tools) -> tuple[ToolCallingFake, list[ToolMessage]]:
    model = model_writing(programs)
    agent = create_agent(model, tools=lc_tools(tools), middleware=[TetherCodeMode()])
    state = asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": "weather?"}]}))
    return model, [m for m in state["messages"] if isinstance(m, ToolMessage)]


def test_the_middleware_offers_run_code_in_place_of_the_tools() -> None:
    tools = Tools()
    model, returned = play([CONCURRENT], tools)
    (offered,) = model.bound[0]
    assert offered.name == "run_code"
    assert "async def get_population(*, city: str) -> int" in offered.description
    assert sorted(tools.calls) == [("get_population", {"city": "Oslo"}),
                                   ("get_weather", {"city": "Oslo"})]
    (message,) = returned
    assert message.content == f"Printed:\nsky: overcast\nReturned: {RETURNED}"


def test_a_type_error_comes_back_before_anything_runs() -> None:
    tools = Tools()
    _, returned = play([TYPE_ERROR], tools)
    assert tools.calls == []
    (message,) = returned
    assert str(message.content).startswith("The program was not run: the check found problems.")


def test_run_code_tool_alone() -> None:
    tools = Tools()
    run_code = run_code_tool(lc_tools(tools))
    assert run_code.name == "run_code"
    assert "async def get_weather(*, city: str)" in run_code.description
    text = asyncio.run(run_code.ainvoke({"code": CONCURRENT}))
    assert text == f"Printed:\nsky: overcast\nReturned: {RETURNED}"
    assert run_code.invoke({"code": "return 1 + 1"}) == "Returned: 2"


def test_codeact_eval_fn_carries_variables_and_calls_tools_at_once() -> None:
    # As langgraph-codeact's sandbox node calls it: the context is the tools
    # ({name: tool.func}) and what earlier scripts left; the new variables
    # it returns are merged into the context for the next script.
    tools = Tools()
    eval_fn = codeact_eval_fn()
    context: dict[str, Any] = {"get_weather": tools.get_weather,
                               "get_population": tools.get_population}
    first = CONCURRENT.replace("return ", "summary = ")
    output, new = asyncio.run(eval_fn(first, context))
    assert output == "sky: overcast\n"
    assert new["summary"] == {"temp": 6, "people": 709}
    context.update(new)
    output, new = asyncio.run(eval_fn("print(summary['people'] + 1)\n", context))
    assert output == "710\n"
    output, _ = asyncio.run(eval_fn(TYPE_ERROR.replace("return ", ""), context))
    assert output.startswith("The program was not run: the check found problems.")
