"""TetherExecutor as a real smolagents CodeAgent's executor, driven by a
scripted Model (smolagents' model interface, answering without a network)."""

from __future__ import annotations

import datetime
import threading
from typing import Any

import pytest
from pydantic import BaseModel

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


@tool
def get_temperature(city: str) -> int:
    """The temperature now in a city, in degrees Celsius.

    Args:
        city: the city's name
    """
    calls.append(("get_temperature", city))
    return {"Oslo": 6, "Bergen": 8}[city]


def play(steps: list[str], tools: list[Any] | None = None,
         **arguments: Any) -> tuple[Any, Scripted, TetherExecutor]:
    calls.clear()
    both.reset()
    model = Scripted(steps)
    executor = TetherExecutor(pool=None)
    agent = CodeAgent(tools=[get_weather, get_population] if tools is None else tools,
                      model=model, executor=executor, max_steps=4)
    try:
        return agent.run("weather?", **arguments), model, executor
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
    code = 'x = get_weather(city="Oslo")\nf = lambda: get_weather(city="x")\n'
    assert awaited(code, {"get_weather"}) == (
        'x = (await get_weather(city="Oslo"))\nf = lambda: get_weather(city="x")\n')
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


def test_carried_variables_outside_the_value_model_are_dropped_and_the_step_runs() -> None:
    when = datetime.date(2024, 1, 1)
    answer, _, executor = play(["final_answer(city)\n"], tools=[],
                               additional_args={"city": "Oslo", "when": when})
    assert answer == "Oslo"
    assert executor.dropped == {"when": "$: date is outside the value model"}
    assert executor.state["when"] is when  # kept, but not carried into the program


def test_an_executor_given_a_variable_outside_the_value_model_drops_it() -> None:
    executor = TetherExecutor(pool=None)
    try:
        executor.send_tools({})
        executor.send_variables({"city": "Oslo", "when": datetime.date(2024, 1, 1),
                                 "not a name": 1})
        output = executor("print(city)\ncity * 2\n")
    finally:
        executor.cleanup()
    assert (output.output, output.logs) == ("OsloOslo", "Oslo\n")
    assert sorted(executor.dropped) == ["not a name", "when"]


def test_a_generator_of_tool_calls_becomes_a_list() -> None:
    step = 'total = sum(get_temperature(c) for c in ["Oslo", "Bergen"])\nfinal_answer(total)\n'
    assert awaited(step, {"get_temperature", "final_answer"}) == (
        'total = sum([(await get_temperature(c)) for c in ["Oslo", "Bergen"]])\n'
        '(await final_answer(total))\n')
    assert awaited("x = list((f(y) for y in z))", {"f"}) == (
        "x = list(([(await f(y)) for y in z]))")
    answer, _, _ = play([step], tools=[get_temperature])
    assert answer == 14
    assert calls == [("get_temperature", "Oslo"), ("get_temperature", "Bergen")]


def test_helper_functions_that_call_tools_become_async() -> None:
    step = ("def mean(cities):\n"
            "    return sum(temperature(c) for c in cities) / len(cities)\n"
            "def temperature(city):\n"
            "    return get_temperature(city)\n"
            'final_answer(mean(["Oslo", "Bergen"]))\n')
    assert awaited(step, {"get_temperature", "final_answer"}) == (
        "async def mean(cities):\n"
        "    return sum([(await temperature(c)) for c in cities]) / len(cities)\n"
        "async def temperature(city):\n"
        "    return (await get_temperature(city))\n"
        '(await final_answer((await mean(["Oslo", "Bergen"]))))\n')
    answer, _, _ = play([step], tools=[get_temperature])
    assert answer == 7


def test_a_helper_used_other_than_by_a_call_is_left_as_it_is() -> None:
    # Made async, it would break where it is passed as a value; the check
    # then reports the call it cannot await.
    step = ("def temperature(city):\n"
            "    return get_temperature(city)\n"
            "print(sorted(cities, key=temperature))\n"
            "def twice(city):\n"
            "    return 2 * temperature(city)\n")
    assert awaited(step, {"get_temperature"}) == step


class Customer(BaseModel):
    id: int
    name: str


@tool
def get_customer(id: int) -> Any:
    """The customer with this id.

    Args:
        id: the customer's id
    """
    return Customer(id=id, name="Ada")


def test_a_tool_returning_a_pydantic_model_gives_the_program_its_fields() -> None:
    answer, _, _ = play(['c = get_customer(id=7)\nfinal_answer(c["name"])\n'],
                        tools=[get_customer])
    assert answer == "Ada"
