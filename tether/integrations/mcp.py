"""MCP: tools of MCP servers as bindings, and a server offering one
``run_code`` tool in front of bindings (code mode for any MCP server).

:func:`bindings_from_mcp` turns a connected client's tools into
:class:`tether.Binding`\\ s: each tool's input schema is the declaration, a
structured result is the value (else the text of its content), and a tool
error reaches the program as a ``BindingError`` of type ``MCPToolError``.
:func:`server` builds an ``MCPServer`` whose ``run_code`` tool runs programs
with the given bindings; ``tether mcp`` serves it (:func:`serve`).
"""

from __future__ import annotations

import asyncio
import shlex
import signal
from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import Any, Protocol

import mcp_types
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from tether.host import Binding, Limits, Runtime
from tether.host.bindings import BindingsArg, describe_bindings

from . import _common

__all__ = ["MCPToolError", "bindings_from_mcp", "serve", "server"]


class MCPToolError(Exception):
    """An MCP tool answered with an error (``is_error``): its text."""


class ToolSource(Protocol):
    """What :func:`bindings_from_mcp` needs: an ``mcp.Client`` or a
    ``ClientSession``."""

    async def list_tools(self, *, cursor: str | None = ...) -> mcp_types.ListToolsResult: ...

    async def call_tool(self, name: str,
                        arguments: dict[str, Any] | None = ...) -> mcp_types.CallToolResult: ...


async def bindings_from_mcp(client: ToolSource) -> list[Binding]:
    """The tools ``client`` lists (every page), as bindings that call them
    through it."""
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    while True:
        listing = await client.list_tools(cursor=cursor)
        tools.extend(listing.tools)
        cursor = listing.next_cursor
        if not cursor:
            return [_binding(client, tool) for tool in tools]


def _binding(client: ToolSource, tool: mcp_types.Tool) -> Binding:
    name = tool.name

    async def call(**arguments: Any) -> Any:
        return value(await client.call_tool(name, arguments))

    return Binding(name=name, description=tool.description or tool.title or "",
                   parameters=tool.input_schema, result=tool.output_schema, function=call)


def value(result: mcp_types.CallToolResult) -> Any:
    """A tool's result as a value: its structured content, else its one text
    block (parsed, when it is a JSON object or array: servers often send
    JSON as text), else a list of its blocks (text as str, others as dicts).
    Raises MCPToolError for an error result."""
    if result.is_error:
        raise MCPToolError(_text(result.content))
    if result.structured_content is not None:
        return result.structured_content
    blocks = [block.text if isinstance(block, mcp_types.TextContent)
              else block.model_dump(mode="json", by_alias=True, exclude_none=True)
              for block in result.content]
    if len(blocks) == 1 and isinstance(blocks[0], str):
        return _common.json_or_text(blocks[0])
    return blocks


def _text(content: Sequence[Any]) -> str:
    return "\n".join(block.text for block in content
                     if isinstance(block, mcp_types.TextContent)) or "the tool failed"


def server(bindings: BindingsArg, *, runtime: Runtime | None = None, language: str = "python",
           limits: Limits | None = None, name: str = "tether") -> MCPServer:
    """An MCP server with one tool, ``run_code``, described by the bindings'
    text (:meth:`tether.Runtime.describe`), that runs each program with the
    bindings, checked first. A program that fails the check or ends without a
    value is a tool error (``is_error``) whose text says why."""
    mcp = MCPServer(name)
    runtimes = _common.Runtimes(runtime)

    async def run_code(code: str) -> str:
        result = await _common.run(runtimes, code, bindings, language=language, limits=limits)
        if not result.ok:
            raise ToolError(_common.failure_text(result))
        return _common.report(result)

    mcp.add_tool(run_code, name=_common.RUN_CODE,
                 description=_common.description(runtime, bindings, language, limits))
    return mcp


def upstream(command: str) -> StdioServerParameters:
    """The parameters to start an MCP server over stdio from a command line."""
    argv = shlex.split(command)
    if not argv:
        raise ValueError("an empty --upstream command")
    return StdioServerParameters(command=argv[0], args=argv[1:])


async def serve(bindings: BindingsArg = None, *, upstreams: Sequence[str] = (),
                language: str = "python", limits: Limits | None = None,
                transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve ``run_code`` over ``transport`` (``stdio`` or
    ``streamable-http``), with ``bindings`` and the tools of each upstream
    server (started from its command line), until the client goes away or
    SIGTERM comes; either way the upstream servers and the guests end."""
    if transport not in ("stdio", "streamable-http"):
        raise ValueError(f"unknown transport {transport!r}: stdio or streamable-http")
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    stopping: list[bool] = []

    def stop() -> None:
        if not stopping:  # once: a second SIGTERM must not cut the cleanup short
            stopping.append(True)
            task.cancel()

    loop.add_signal_handler(signal.SIGTERM, stop)
    try:
        await _serve(bindings, upstreams, language=language, limits=limits,
                     transport=transport, host=host, port=port)
    except asyncio.CancelledError:
        if not stopping:
            raise
        task.uncancel()  # cancelled by SIGTERM: ended as asked
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


async def _serve(bindings: BindingsArg, upstreams: Sequence[str], *, language: str,
                 limits: Limits | None, transport: str, host: str, port: int) -> None:
    async with AsyncExitStack() as stack:
        offered = describe_bindings(bindings)
        for command in upstreams:
            client = await stack.enter_async_context(Client(upstream(command)))
            offered.extend(describe_bindings(await bindings_from_mcp(client)))
        runtime = await stack.enter_async_context(Runtime())
        mcp = server(offered, runtime=runtime, language=language, limits=limits)
        if transport == "stdio":
            await mcp.run_stdio_async()
        else:
            await mcp.run_streamable_http_async(host=host, port=port)
