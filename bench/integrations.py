"""What a ``run_code`` call costs through an integration, beside the run.

    python bench/integrations.py [--repeat N]

Medians (and ranges) over N calls, with one warm Runtime throughout:
``Runtime.run`` of the two-tool program alone, with ``check=True``, then
through pydantic-ai's ``TetherCodeMode`` (a FunctionModel agent run making
one ``run_code`` call) and through ``tether mcp`` over stdio with the two
tools on an upstream MCP server (one ``call_tool`` each).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tether import Runtime

PROGRAM = """\
import asyncio
weather, people = await asyncio.gather(get_weather(city="Oslo"), get_population(city="Oslo"))
return [weather["temp"], people]
"""

UPSTREAM = '''
from mcp.server.mcpserver import MCPServer
server = MCPServer("upstream")

@server.tool()
async def get_weather(city: str) -> dict:
    """The weather now in a city."""
    return {"temp": 6}

@server.tool(structured_output=False)
async def get_population(city: str) -> int:
    """How many people live in a city."""
    return 709000

server.run("stdio")
'''


async def get_weather(city: str) -> dict[str, Any]:
    """The weather now in a city."""
    return {"temp": 6}


async def get_population(city: str) -> int:
    """How many people live in a city."""
    return 709_000


TOOLS = [get_weather, get_population]


async def _timed(repeat: int, one: Callable[[], Awaitable[object]]) -> list[float]:
    for _ in range(3):  # warm: pools, the checker, imports
        await one()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        await one()
        times.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(0.05)  # the pool refills between calls, as between agent steps
    return times


async def _pydantic_ai(rt: Runtime, repeat: int) -> list[float]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    from tether.integrations.pydantic_ai import TetherCodeMode

    def model(messages: list[Any], info: Any) -> ModelResponse:
        if any(isinstance(p, ToolReturnPart) for m in messages for p in getattr(m, "parts", [])):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("run_code", {"code": PROGRAM})])

    agent = Agent(FunctionModel(model), tools=TOOLS, capabilities=[TetherCodeMode(runtime=rt)])
    return await _timed(repeat, lambda: agent.run("go"))


async def _mcp(repeat: int) -> list[float]:
    from mcp import Client, StdioServerParameters

    with tempfile.TemporaryDirectory() as scratch:
        upstream = Path(scratch) / "upstream.py"
        upstream.write_text(UPSTREAM)
        server = StdioServerParameters(command=sys.executable, args=[
            "-m", "tether", "mcp", "--upstream", f"{sys.executable} {upstream}"])
        async with Client(server) as client:
            async def one() -> None:
                result = await client.call_tool("run_code", {"code": PROGRAM})
                assert not result.is_error, result

            return await _timed(repeat, one)


def _line(name: str, times: list[float]) -> str:
    return (f"{name:<36} {statistics.median(times):7.1f} ms "
            f"({min(times):.1f}-{max(times):.1f})")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    repeat = parser.parse_args().repeat
    async with Runtime() as rt:
        async def run(check: bool) -> None:
            result = await rt.run(PROGRAM, bindings=TOOLS, check=check)
            assert result.ok, result.error

        print(_line("Runtime.run", await _timed(repeat, lambda: run(False))))
        print(_line("Runtime.run(check=True)", await _timed(repeat, lambda: run(True))))
        print(_line("pydantic-ai agent run (1 run_code)", await _pydantic_ai(rt, repeat)))
    print(_line("tether mcp --upstream, call_tool", await _mcp(repeat)))


if __name__ == "__main__":
    asyncio.run(main())
