"""The Anthropic SDK's tool runner with one run_code tool in front of the
other tools: programmatic tool calling, run on this machine.

    python examples/anthropic_agent.py

Offline: the Messages API is a scripted local transport (its answers are
written here, not recorded from the service). One tool returns a pydantic
model, one is sync. (The SDK types a tool's result as text or content
blocks, so a tool returning anything else is annotated ``-> Any``; tether
declares each tool by its function's annotations, and converts what it
returns as every integration does.)
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
from anthropic import AsyncAnthropic, beta_async_tool, beta_tool
from pydantic import BaseModel

from tether.integrations.anthropic import run_code_tool

PROGRAM = """\
import asyncio
weather, people = await asyncio.gather(get_weather(city="Oslo"), get_population(city="Oslo"))
return f"{weather['temp']} °C, {weather['sky']}; {people:,} people"
"""


class Weather(BaseModel):
    temp: int
    sky: str


@beta_async_tool
async def get_weather(city: str) -> Any:
    """The weather now in a city."""
    return Weather(temp=6, sky="overcast")


@beta_tool
def get_population(city: str) -> Any:
    """How many people live in a city."""
    return 709_000


def scripted_api(request: httpx2.Request) -> httpx2.Response:
    last = json.loads(request.content)["messages"][-1]
    results = [b for b in last["content"] if isinstance(b, dict)
               and b.get("type") == "tool_result"] if isinstance(last["content"], list) else []
    if not results:
        content: list[dict[str, Any]] = [{"type": "tool_use", "id": "toolu_1",
                                          "name": "run_code", "input": {"code": PROGRAM}}]
        stop = "tool_use"
    else:
        text = results[0]["content"]
        text = text if isinstance(text, str) else text[0]["text"]
        content, stop = [{"type": "text", "text": f"Oslo now: {text}"}], "end_turn"
    return httpx2.Response(200, json={
        "id": "msg", "type": "message", "role": "assistant", "model": "claude-x",
        "content": content, "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}})


async def main() -> None:
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(scripted_api)) as http:
        client = AsyncAnthropic(api_key="offline", http_client=http)
        runner = client.beta.messages.tool_runner(
            model="claude-x", max_tokens=1000,
            tools=[run_code_tool([get_weather, get_population])],
            messages=[{"role": "user", "content": "What is Oslo like right now?"}])
        final = await runner.until_done()
        print(final.content[0].text)  # type: ignore[union-attr]


if __name__ == "__main__":
    asyncio.run(main())
