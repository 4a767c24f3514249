"""TetherExecutor as a real smolagents CodeAgent's executor, driven by a
scripted Model (smolagents' model interface, answering without a network)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

pytest.importorskip("smolagents", reason="the smolagents extra is not installed")

from smolagents import CodeAgent, tool
from smolagents.models import ChatMessage, MessageRole, Model

from tether.integrations._awaited import awaited
from tether.integrations.smolagents import TetherExecutor

calls: list[tuple[str, str]] = []
both = threading.Barrier(2, timeout=30)


@tool
def get_weather(city: str) -> dict:  # type: ignore[type-arg]
    """The weather now in a city.

    Args:
        city: the city's name
    """
    calls.append(("get_weather", city))
    both.wait()  # returns only once the other tool has started too
    return {"temp": 6, "sky": "overcast"}


@tool
def get_population(city: str) -> int:
    """How many people live in a city.

    Args:
        city: the city's name
    """
    calls.append(("get_population", city))
    both.wait()
    return 709_000


class Scripted(Model):
    """Writes each step in turn, keeping what the agent showed it."""

    def __init__(self, steps: list[str]) -> None:
        super().__init__(model_id="scripted")
        self.steps = steps
        self.seen: list[str] = []

    def generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> ChatMessage:
        content = messages[-1].content
        self.seen.append(content if isinstance(content, str) else
                         "".join(part.get("text", "") for part in content))
        step = self.steps.pop(0)
        return ChatMessage(role=MessageRole.ASSISTANT,
                           content=f"Thought: go.\n<code>\n{step}</code>")


def play(steps: list[str]) -> tuple[Any, Scripted, TetherExecutor]:
    calls.clear()
    both.reset()
    model = Scripted(steps)
    executor = TetherExecutor(pool=None)
    agent = CodeAgent(tools=[get_weather, get_population], model=model, executor=executor,
                      max_steps=4)
    try:
        return agent.run("weather?"), model, executor
    finally:
        agent.cleanup()


def test_a_step_calls_two_tools_at_once_then_answers() -> None:
    step = ("import asyncio\n"
            'weather, people = await asyncio.gather(get_weather(city="Oslo"), '
            'get_population(city="Oslo"))\n'
            'print("sky:", weather["sky"])\n'
            'final_answer({"temp": weather["temp"], "people": people // 1000})\n')
    answer, _, _ = play([step])
    assert answer == {"temp": 6, "people": 709}
    assert sorted(calls) == [("get_population", "Oslo"), ("get_weather", "Oslo")]


def test_a_type_error_comes_back_before_anything_runs() -> None:
    answer, model, _ = play(['get_population(city=1)\n', 'final_answer("gave up")\n'])
    assert answer == "gave up"
    assert calls == []
    assert "not run: the check found problems" in model.seen[-1]


def test_state_carries_between_steps_as_values() -> None:
    answer, model, executor = play(["n = 20\nn\n", "n += 1\nm = open\n",
                                    "final_answer(n * 2)\n"])
    assert answer == 42
    assert executor.state["n"] == 21
    assert "Last output from code snippet:\n20" in model.seen[1]


def test_sync_calls_are_awaited_in_place() -> None:
    code = 'x = get_weather(city="Oslo")\ndef f():\n    return get_weather(city="x")\n'
    assert awaited(code, {"get_weather"}) == (
        'x = (await get_weather(city="Oslo"))\ndef f():\n    return get_weather(city="x")\n')
    assert awaited("await get_weather(city='a')", {"get_weather"}) == (
        "await get_weather(city='a')")


def test_a_managed_agent_is_a_binding_on_the_host() -> None:
    # smolagents' remote executors refuse managed agents: here the helper
    # runs on the host, called from the manager's step like a tool.
    helper = CodeAgent(tools=[], model=Scripted(['final_answer("42 apples")\n']),
                       name="helper", description="Counts things.", max_steps=2)
    executor = TetherExecutor(pool=None)
    manager = CodeAgent(tools=[], managed_agents=[helper], executor=executor, max_steps=2,
                        model=Scripted(['report = helper(task="count the apples")\n'
                                        "final_answer(report)\n"]))
    try:
        answer = manager.run("how many apples?")
    finally:
        manager.cleanup()
    assert "42 apples" in answer
