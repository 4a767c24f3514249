"""`tether mcp` against a real MCP client over stdio, with bindings from a
module and from a real upstream MCP server (the small one below)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

from mcp import Client, StdioServerParameters

from tether import Runtime
from tether.integrations.mcp import MCPToolError, bindings_from_mcp, value

from .scenario import CONCURRENT, RETURNED, TYPE_ERROR

#: An upstream MCP server: the scenario's two tools (each waits for the
#: other, so only concurrent calls finish), one that fails, and a log of
#: the calls that reached it, as a tool too.
UPSTREAM = '''
import asyncio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("upstream")
calls = []
both = asyncio.Event()

async def meet():
    if len(calls) >= 2:
        both.set()
    await asyncio.wait_for(both.wait(), 30)

@server.tool()
async def get_weather(city: str) -> dict:
    """The weather now in a city."""
    calls.append(["get_weather", city])
    await meet()
    return {"temp": 6, "sky": "overcast"}

@server.tool()
async def get_population(city: str) -> int:
    """How many people live in a city."""
    calls.append(["get_population", city])
    await meet()
    return 709000

@server.tool()
def closed(reason: str) -> str:
    """Always fails."""
    raise ToolError(f"closed: {reason}")

@server.tool()
def calls_so_far() -> list:
    """The calls made so far."""
    return calls

server.run("stdio")
'''


@pytest.fixture
def upstream(tmp_path: Path) -> str:
    path = tmp_path / "upstream.py"
    path.write_text(UPSTREAM, encoding="utf-8")
    return f"{sys.executable} {path}"


def tether_mcp(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "tether", "mcp", *args])


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


def test_run_code_is_described_by_the_bindings_text() -> None:
    async def go() -> Any:
        async with Client(tether_mcp("--bindings", "tether.demo:BINDINGS")) as client:
            return (await client.list_tools()).tools

    (tool,) = asyncio.run(go())
    assert tool.name == "run_code"
    assert "async def weather(city: str)" in (tool.description or "")
    assert tool.input_schema["required"] == ["code"]


def test_a_program_calls_upstream_tools_at_once(upstream: str) -> None:
    async def go() -> tuple[Any, Any]:
        async with Client(tether_mcp("--upstream", upstream)) as client:
            listed = (await client.list_tools()).tools
            return listed, await client.call_tool("run_code", {"code": CONCURRENT})

    (tool,), result = asyncio.run(go())
    # MCPServer sends a result that is not an object as {"result": ...} and
    # declares it so: the program gets the number, declared as one.
    assert "async def get_population(*, city: str) -> int" in (tool.description or "")
    assert not result.is_error, text(result)
    assert text(result) == f"Printed:\nsky: overcast\nReturned: {RETURNED}"
    assert result.structured_content == {"result": {"temp": 6, "people": 709}}


def test_limits_sandbox_and_check_are_options() -> None:
    async def go() -> tuple[Any, Any]:
        async with Client(tether_mcp("--bindings", "tether.demo:BINDINGS", "--timeout", "1",
                                     "--no-check", "--sandbox", "process")) as client:
            looping = await client.call_tool("run_code", {"code": "while True:\n    pass"})
            unchecked = await client.call_tool("run_code", {"code": "return await add('a', 1)"})
            return looping, unchecked

    looping, unchecked = asyncio.run(go())
    assert looping.is_error and "status timeout" in text(looping)
    # Not checked: the run itself refuses the argument.
    assert unchecked.is_error and "not run: the check" not in text(unchecked)


CRASHING = '''
import os, sys
from mcp.server.mcpserver import MCPServer
server = MCPServer("crashing")

@server.tool()
def crash() -> str:
    """Ends the server's process."""
    os._exit(3)

@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()

server.run("stdio")
'''


def test_a_crashed_upstream_is_started_again(tmp_path: Path) -> None:
    path = tmp_path / "crashing.py"
    path.write_text(CRASHING, encoding="utf-8")
    program = ("before = await pid()\ntry:\n    await crash()\nexcept BindingError as e:\n"
               "    failed = e.type\nreturn [failed, before != await pid()]\n")

    async def go() -> Any:
        async with Client(tether_mcp("--upstream", f"{sys.executable} {path}")) as client:
            return await client.call_tool("run_code", {"code": program})

    result = asyncio.run(go())
    assert not result.is_error, text(result)
    assert result.structured_content == {"result": ["MCPToolError", True]}


def test_a_type_error_comes_back_before_anything_runs(upstream: str) -> None:
    async def go() -> Any:
        async with Client(tether_mcp("--upstream", upstream)) as client:
            return await client.call_tool("run_code", {"code": TYPE_ERROR})

    result = asyncio.run(go())
    assert result.is_error
    assert "not run: the check found problems" in text(result)
    assert "line 1" in text(result)


def test_bindings_from_mcp_map_results_and_errors(upstream: str) -> None:
    program = """
try:
    await closed(reason="holiday")
except BindingError as exc:
    failed = [exc.type, exc.message]
return {"failed": failed, "calls": await calls_so_far()}
"""
    command, *args = upstream.split()

    async def go() -> Any:
        async with Client(StdioServerParameters(command=command, args=args)) as client:
            bindings = await bindings_from_mcp(client)
            async with Runtime(pool=None) as rt:
                return bindings, await rt.run(program, bindings=bindings, check=True)

    bindings, result = asyncio.run(go())
    assert [b.name for b in bindings] == ["get_weather", "get_population", "closed",
                                          "calls_so_far"]
    assert bindings[1].parameters["required"] == ["city"]
    assert result.ok, result.error
    failed = ["MCPToolError", "Error executing tool closed: closed: holiday"]
    assert result.value == {"failed": failed, "calls": []}


def test_value_is_the_text_without_structured_content() -> None:
    import mcp_types

    plain = mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text="hi")])
    assert value(plain) == "hi"
    number = mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text="42")])
    assert value(number, {"type": "integer"}) == 42
    failed = mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text="no")], is_error=True)
    with pytest.raises(MCPToolError, match="no"):
        value(failed)


def test_streamable_http() -> None:
    import socket
    import subprocess

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "tether", "mcp", "--bindings", "tether.demo:BINDINGS",
         "--transport", "streamable-http", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    async def go() -> Any:
        for _ in range(300):  # until the server listens
            try:
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                    return await client.call_tool("run_code", {"code": "return await add(1, 2)"})
            except Exception:
                if server.poll() is not None:
                    raise
                await asyncio.sleep(0.1)
        raise AssertionError("tether mcp never listened")

    try:
        assert text(asyncio.run(go())) == "Returned: 3"
    finally:
        server.terminate()
        # SIGTERM ends it cleanly: its guests and their folders go with it
        # (the suite's leak check sees any left behind).
        assert server.wait(timeout=30) == 0
