"""Code mode for any MCP server: `tether mcp --upstream` turns an MCP
server's tools into bindings and serves one run_code tool in front of them.

    python examples/mcp_code_mode.py

Offline: the upstream server is the small one below, started over stdio;
the client plays the model's part and calls run_code with a program.
"""

from __future__ import annotations

import asyncio
import sys

from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer

PROGRAM = """\
import asyncio
weather, people = await asyncio.gather(get_weather(city="Oslo"), get_population(city="Oslo"))
return f"{weather['temp']} °C, {weather['sky']}; {people:,} people"
"""

upstream = MCPServer("weather")


@upstream.tool()
async def get_weather(city: str) -> dict[str, object]:
    """The weather now in a city."""
    return {"temp": 6, "sky": "overcast"}


@upstream.tool()
async def get_population(city: str) -> int:
    """How many people live in a city."""
    return 709_000


async def main() -> None:
    tether_mcp = StdioServerParameters(command=sys.executable, args=[
        "-m", "tether", "mcp", "--upstream", f"{sys.executable} {__file__} --upstream"])
    async with Client(tether_mcp) as client:
        (tool,) = (await client.list_tools()).tools
        print(f"tether mcp serves {tool.name!r}; its description begins:")
        print("  " + (tool.description or "").splitlines()[0])
        result = await client.call_tool("run_code", {"code": PROGRAM})
        print(result.content[0].text)  # type: ignore[union-attr]


if __name__ == "__main__":
    if sys.argv[1:] == ["--upstream"]:
        upstream.run("stdio")
    else:
        asyncio.run(main())
