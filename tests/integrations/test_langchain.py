"""run_code_tool and the TetherCodeMode middleware in a real LangChain
agent (create_agent, a LangGraph graph), driven by LangChain's fake chat
model taught to accept tools."""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

pytest.importorskip("langchain", reason="the langchain extra is not installed")

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain.tools import InjectedState, InjectedToolCallId, ToolRuntime
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, tool
from pydantic import BaseModel, Field

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


class ReplyingTo(GenericFakeChatModel):
    """A fake chat model serving several conversations at once: it writes
    the program its conversation's first message asks for, then ends. It
    waits before replying, so that concurrent conversations all reach it
    before any runs its tool."""

    programs: dict[str, str] = Field(default_factory=dict)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self

    async def _agenerate(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0.2)
        if isinstance(messages[-1], ToolMessage):
            reply = AIMessage("done")
        else:
            # The same call id in every conversation, as a scripted model gives.
            reply = AIMessage("", tool_calls=[{
                "name": "run_code", "id": "call_0",
                "args": {"code": self.programs[str(messages[0].content)]}}])
        return ChatResult(generations=[ChatGeneration(message=reply)])


class OnlyTheToolAskedFor(AgentMiddleware[Any, Any, Any]):
    """A tool-selection middleware: each conversation is offered only the
    tool its first message names."""

    async def awrap_model_call(self, request: ModelRequest[Any], handler: Any) -> Any:
        wanted = {request.messages[0].content, "run_code"}
        return await handler(request.override(
            tools=[t for t in request.tools if getattr(t, "name", None) in wanted]))


def test_conversations_served_at_once_by_one_agent_each_call_only_their_own_tools() -> None:
    calls: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """The sky now in a city."""
        calls.append("get_weather")
        return "overcast"

    @tool
    def get_population(city: str) -> int:
        """How many people live in a city."""
        calls.append("get_population")
        return 709_000

    both = 'import asyncio\nreturn await asyncio.gather(get_weather(city="Oslo"), ' \
           'get_population(city="Oslo"))\n'
    model = ReplyingTo(messages=iter([]), programs={
        "get_weather": 'return await get_weather(city="Oslo")\n',
        "get_population": both})
    agent = create_agent(model, tools=[get_weather, get_population],
                         middleware=[OnlyTheToolAskedFor(), TetherCodeMode()])

    async def conversations() -> list[dict[str, Any]]:
        return await asyncio.gather(*(
            agent.ainvoke({"messages": [{"role": "user", "content": wanted}]})
            for wanted in ("get_weather", "get_population")))

    weather, population = asyncio.run(conversations())
    (message,) = [m for m in weather["messages"] if isinstance(m, ToolMessage)]
    assert message.content == 'Returned: "overcast"'
    # get_weather was withheld from this conversation: its program may not call it.
    (message,) = [m for m in population["messages"] if isinstance(m, ToolMessage)]
    assert str(message.content).startswith("The program was not run: the check found problems.")
    assert "`get_weather` used when not defined" in str(message.content)
    assert calls == ["get_weather"]


@dataclass
class User:
    name: str


def test_a_folded_tool_gets_what_langgraph_injects_as_if_the_model_had_called_it() -> None:
    seen: list[str | None] = []

    @tool
    def whoami(greeting: str, runtime: ToolRuntime[User],
               messages: Annotated[list[Any], InjectedState("messages")],
               call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Greet the current user.

        Args:
            greeting: how to greet them
        """
        seen.extend([runtime.tool_call_id, call_id])
        return f"{greeting}, {runtime.context.name} ({len(messages)} messages)"

    program = 'return await whoami(greeting="hello")\n'
    model = model_writing([program])
    agent = create_agent(model, tools=[whoami], middleware=[TetherCodeMode()],
                         context_schema=User)
    state = asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": "who?"}]},
                                      context=User(name="ada")))
    (offered,) = model.bound[0]
    assert "greeting: str" in offered.description
    assert "runtime" not in offered.description and "call_id" not in offered.description
    (message,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert message.content == 'Returned: "hello, ada (2 messages)"'
    # The nested call has an id of its own, the same wherever it is injected.
    assert seen[0] == seen[1] and seen[0] is not None and seen[0] != "call_0"


class Weather(BaseModel):
    temp: int
    sky: str


def test_a_tool_returning_a_pydantic_model_gives_the_program_its_fields() -> None:
    @tool
    def get_weather(city: str) -> Weather:
        """The weather now in a city.

        Args:
            city: the city's name
        """
        return Weather(temp=6, sky="overcast")

    run_code = run_code_tool([get_weather])
    assert "sky: str" in run_code.description
    text = asyncio.run(run_code.ainvoke(
        {"code": 'weather = await get_weather(city="Oslo")\nreturn weather["sky"]\n'}))
    assert text == 'Returned: "overcast"'


def test_run_code_tool_invoked_synchronously_from_a_running_event_loop() -> None:
    # As from a Jupyter cell, or from async code calling .invoke.
    tools = Tools()
    run_code = run_code_tool(lc_tools(tools))

    async def from_a_loop() -> Any:
        return run_code.invoke({"code": CONCURRENT})

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. a coroutine never awaited
        text = asyncio.run(from_a_loop())
        gc.collect()
    assert text == f"Printed:\nsky: overcast\nReturned: {RETURNED}"
