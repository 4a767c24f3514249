"""A pydantic-ai agent whose tools the model calls from one program.

    python examples/pydantic_ai_agent.py

Offline: FunctionModel stands in for the model, writing the program a model
would write for run_code, then answering with what it got back.
"""

from __future__ import annotations

import asyncio

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tether.integrations.pydantic_ai import TetherCodeMode

PROGRAM = """\
import asyncio
weather, people = await asyncio.gather(get_weather(city="Oslo"), get_population(city="Oslo"))
return f"{weather['temp']} °C, {weather['sky']}; {people:,} people"
"""


async def get_weather(city: str) -> dict[str, object]:
    """The weather now in a city."""
    return {"temp": 6, "sky": "overcast"}


async def get_population(city: str) -> int:
    """How many people live in a city."""
    return 709_000


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    (run_code,) = info.function_tools  # the agent's two tools, folded into one
    returned = [p for m in messages for p in getattr(m, "parts", [])
                if isinstance(p, ToolReturnPart)]
    if not returned:
        print("The model sees one tool:", run_code.name)
        return ModelResponse(parts=[ToolCallPart("run_code", {"code": PROGRAM})])
    return ModelResponse(parts=[TextPart(f"Oslo now: {returned[-1].content}")])


async def main() -> None:
    agent = Agent(FunctionModel(model), tools=[get_weather, get_population],
                  capabilities=[TetherCodeMode()])
    result = await agent.run("What is Oslo like right now?")
    print(result.output)


if __name__ == "__main__":
    asyncio.run(main())
