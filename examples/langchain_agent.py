"""A LangChain agent (create_agent, a LangGraph graph) whose tools the
TetherCodeMode middleware folds into one run_code tool.

    python examples/langchain_agent.py

Offline: LangChain's fake chat model, taught to accept tools, writes the
program a model would write, then answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from tether.integrations.langchain import TetherCodeMode

PROGRAM = """\
import asyncio
weather, people = await asyncio.gather(get_weather(city="Oslo"), get_population(city="Oslo"))
return f"{weather['temp']} °C, {weather['sky']}; {people:,} people"
"""


@tool
async def get_weather(city: str) -> dict[str, Any]:
    """The weather now in a city."""
    return {"temp": 6, "sky": "overcast"}


@tool
async def get_population(city: str) -> int:
    """How many people live in a city."""
    return 709_000


class FakeToolModel(GenericFakeChatModel):
    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        print("The model sees:", [t.name for t in tools])
        return self


async def main() -> None:
    model = FakeToolModel(messages=iter([
        AIMessage("", tool_calls=[{"name": "run_code", "args": {"code": PROGRAM}, "id": "c1"}]),
        AIMessage("Oslo is overcast at 6 °C."),
    ]))
    agent = create_agent(model, tools=[get_weather, get_population],
                         middleware=[TetherCodeMode()])
    state = await agent.ainvoke({"messages": [{"role": "user", "content": "Oslo now?"}]})
    for message in state["messages"][1:]:
        print(f"{message.type}: {message.content}")


if __name__ == "__main__":
    asyncio.run(main())
