"""A smolagents CodeAgent whose steps run in fresh tether guests, its tools
on the host, its state carried from step to step as values.

    python examples/smolagents_agent.py

Offline: a scripted Model writes the steps a model would write.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from smolagents import CodeAgent, tool
from smolagents.models import ChatMessage, MessageRole, Model

from tether.integrations.smolagents import TetherExecutor

STEPS = [
    # Tools are called as smolagents' prompt shows them: plain calls.
    'weather = get_weather(city="Oslo")\nprint(weather)\n',
    # The next step, a fresh process, still has `weather`.
    'people = get_population(city="Oslo")\n'
    'final_answer(f"{weather[\'temp\']} °C, {weather[\'sky\']}; {people:,} people")\n',
]


class Weather(BaseModel):
    temp: int
    sky: str


@tool  # type: ignore[untyped-decorator]  # smolagents has no type hints
def get_weather(city: str) -> Any:
    """The weather now in a city.

    Args:
        city: the city's name
    """
    return Weather(temp=6, sky="overcast")  # the program gets its fields


@tool  # type: ignore[untyped-decorator]
def get_population(city: str) -> int:
    """How many people live in a city.

    Args:
        city: the city's name
    """
    return 709_000


class ScriptedModel(Model):  # type: ignore[misc]
    def generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> ChatMessage:
        step = STEPS.pop(0)
        return ChatMessage(role=MessageRole.ASSISTANT,
                           content=f"Thought: next step.\n<code>\n{step}</code>")


def main() -> None:
    # Programs may import the whole standard library: say so in the prompt.
    agent = CodeAgent(tools=[get_weather, get_population], model=ScriptedModel(model_id="x"),
                      executor=TetherExecutor(), additional_authorized_imports=["*"],
                      verbosity_level=0)
    try:
        print(agent.run("What is Oslo like right now?"))
    finally:
        agent.cleanup()


if __name__ == "__main__":
    main()
