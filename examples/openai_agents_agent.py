"""An OpenAI Agents SDK agent with one run_code tool in front of its tools.

    python examples/openai_agents_agent.py

Offline: a scripted Model (the SDK's model interface) writes the program a
model would write, then answers with the tool's output.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agents import Agent, RunConfig, Runner, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from tether.integrations.openai_agents import run_code_tool

PROGRAM = """\
import asyncio
weather, people = await asyncio.gather(get_weather(city="Oslo"), get_population(city="Oslo"))
return f"{weather['temp']} °C, {weather['sky']}; {people:,} people"
"""


@function_tool
async def get_weather(city: str) -> dict[str, Any]:
    """The weather now in a city."""
    return {"temp": 6, "sky": "overcast"}


@function_tool
async def get_population(city: str) -> int:
    """How many people live in a city."""
    return 709_000


class ScriptedModel(Model):
    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        outputs = [item["output"] for item in kwargs["input"]
                   if isinstance(item, dict) and item.get("type") == "function_call_output"]
        if not outputs:
            item: Any = ResponseFunctionToolCall(type="function_call", call_id="call_1",
                                                 name="run_code",
                                                 arguments=json.dumps({"code": PROGRAM}))
        else:
            item = ResponseOutputMessage(id="m", type="message", role="assistant",
                                         status="completed", content=[ResponseOutputText(
                                             type="output_text", annotations=[],
                                             text=f"Oslo now: {outputs[-1]}")])
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


async def main() -> None:
    agent = Agent(name="weather", model=ScriptedModel(),
                  tools=[run_code_tool([get_weather, get_population])])
    result = await Runner.run(agent, "What is Oslo like right now?",
                              run_config=RunConfig(tracing_disabled=True))
    print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
