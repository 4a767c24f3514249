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
import logging
import shlex
import signal
from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import Any, Protocol

import mcp_types
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

from tether.host import Binding, Limits, Runtime
from tether.host.bindings.prepared import BindingsArg, describe_bindings

from . import _common

__all__ = ["MCPToolError", "Upstream", "bindings_from_mcp", "serve", "server"]

logger = logging.getLogger("tether")


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
    result, wrapped = _unwrapped(tool.output_schema)

    async def call(**arguments: Any) -> Any:
        returned = value(await client.call_tool(name, arguments), result)
        if wrapped and isinstance(returned, dict) and returned.keys() == {"result"}:
            return returned["result"]
        return returned

    return Binding(name=name, description=tool.description or tool.title or "",
                   parameters=tool.input_schema, result=result, function=call)


def _unwrapped(schema: dict[str, Any] | None) -> tuple[dict[str, Any] | None, bool]:
    """The declared result of a tool, and whether its structured content
    wraps it: MCP servers made with the SDK send a result that is not an
    object as ``{"result": ...}``, declared by a schema of that one field
    (titled after the tool's function); the program gets the value."""
    if schema is None:
        return None, False
    properties = schema.get("properties")
    if (isinstance(properties, dict) and list(properties) == ["result"]
            and schema.get("required") == ["result"]
            and str(schema.get("title", "")).endswith("Output")):
        inner = dict(properties["result"])
        inner.pop("title", None)
        if "$defs" in schema:
            inner["$defs"] = schema["$defs"]
        return inner, True
    return schema, False


def value(result: mcp_types.CallToolResult, declared: dict[str, Any] | None = None) -> Any:
    """A tool's result as a value: its structured content, else its one text
    block (parsed as the tool's ``declared`` result says, or when it is a
    JSON object or array: servers often send JSON as text), else a list of
    its blocks (text as str, others as dicts). Raises MCPToolError for an
    error result."""
    if result.is_error:
        raise MCPToolError(_text(result.content))
    if result.structured_content is not None:
        return result.structured_content
    blocks = [block.text if isinstance(block, mcp_types.TextContent)
              else block.model_dump(mode="json", by_alias=True, exclude_none=True)
              for block in result.content]
    if len(blocks) == 1 and isinstance(blocks[0], str):
        return _common.value(blocks[0], declared=declared)
    return blocks


def _text(content: Sequence[Any]) -> str:
    return "\n".join(block.text for block in content
                     if isinstance(block, mcp_types.TextContent)) or "the tool failed"


def server(bindings: BindingsArg, *, runtime: Runtime | None = None, language: str = "python",
           limits: Limits | None = None, check: bool = True,
           name: str = "tether") -> MCPServer:
    """An MCP server with one tool, ``run_code``, described by the bindings'
    text (:meth:`tether.Runtime.describe`), that runs each program with the
    bindings (``check``: type-checked first). Its result's text is what the
    model reads back (:func:`tether.integrations._common.report`), its
    structured content ``{"result": value}``. A program that fails the
    check or ends without a value is a tool error (``is_error``) whose
    text says why."""
    mcp = MCPServer(name)
    runtimes = _common.Runtimes(runtime)

    async def run_code(code: str) -> mcp_types.CallToolResult:
        result = await _common.run(runtimes, code, bindings, language=language, limits=limits,
                                   check=check)
        if not result.ok:
            raise ToolError(_common.failure_text(result))
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text=_common.report(result))],
            structured_content={"result": result.value})

    mcp.add_tool(run_code, name=_common.RUN_CODE, structured_output=False,
                 description=_common.description(runtime, bindings, language, limits))
    return mcp


def upstream(command: str) -> StdioServerParameters:
    """The parameters to start an MCP server over stdio from a command line."""
    argv = shlex.split(command)
    if not argv:
        raise ValueError("an empty --upstream command")
    return StdioServerParameters(command=argv[0], args=argv[1:])


class Upstream:
    """An upstream MCP server started from its command line, as a
    :class:`ToolSource`: one that crashed is started again (the call it
    crashed in fails), at most ``restarts`` times, so one crash does not
    fail every later call. The connection lives in a task of its own, as
    the MCP client's task groups require."""

    def __init__(self, command: str, *, restarts: int = 3) -> None:
        self.parameters = upstream(command)
        self.restarts_left = restarts
        self._client: Client | None = None
        self._ready = asyncio.Event()
        self._restart = asyncio.Event()
        self._stopping = False
        self._failure: BaseException | None = None
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Upstream:
        self._task = asyncio.get_running_loop().create_task(self._keep())
        await self._connected()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._stopping = True
        self._restart.set()
        if self._task is not None:
            await self._task

    async def _keep(self) -> None:
        while True:
            try:
                async with Client(self.parameters) as client:
                    self._client = client
                    self._ready.set()
                    await self._restart.wait()
            except Exception as exc:  # it could not start, or it ended badly
                self._failure = exc
            self._client = None
            self._ready.clear()
            self._restart.clear()
            if self._stopping:
                return
            if self.restarts_left <= 0:
                self._ready.set()  # no client: callers get the failure
                return
            self.restarts_left -= 1
            logger.warning("tether mcp: restarting the upstream server %s",
                           self.parameters.command)

    async def _connected(self) -> Client:
        await self._ready.wait()
        if self._client is None:
            raise MCPToolError(f"the upstream server {self.parameters.command} is gone "
                               f"({self._failure!r}), and was restarted as often as it may be")
        return self._client

    async def list_tools(self, *, cursor: str | None = None) -> mcp_types.ListToolsResult:
        client = await self._connected()
        return await client.list_tools(cursor=cursor)

    async def call_tool(self, name: str,
                        arguments: dict[str, Any] | None = None) -> mcp_types.CallToolResult:
        client = await self._connected()
        try:
            return await client.call_tool(name, arguments)
        except MCPError as exc:
            if exc.code != mcp_types.CONNECTION_CLOSED:
                raise
            if self._client is client:  # not restarted meanwhile by another call
                self._ready.clear()
                self._restart.set()
            raise MCPToolError(f"the upstream server {self.parameters.command} ended during "
                               f"the call of {name}; it is started again") from None


async def serve(bindings: BindingsArg = None, *, upstreams: Sequence[str] = (),
                language: str = "python", limits: Limits | None = None,
                sandbox: str = "auto", check: bool = True, transport: str = "stdio",
                host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve ``run_code`` over ``transport`` (``stdio`` or
    ``streamable-http``), with ``bindings`` and the tools of each upstream
    server (started from its command line, and again if it crashes), each
    program run under ``limits`` in the ``sandbox`` profile (``check``:
    type-checked first), until the client goes away or SIGTERM comes;
    either way the upstream servers and the guests end."""
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
        async with AsyncExitStack() as stack:
            offered = describe_bindings(bindings)
            for command in upstreams:
                source = await stack.enter_async_context(Upstream(command))
                offered.extend(describe_bindings(await bindings_from_mcp(source)))
            runtime = await stack.enter_async_context(Runtime(sandbox=sandbox))
            mcp = server(offered, runtime=runtime, language=language, limits=limits,
                         check=check)
            if transport == "stdio":
                await mcp.run_stdio_async()
            else:
                await mcp.run_streamable_http_async(host=host, port=port)
    except asyncio.CancelledError:
        if not stopping:
            raise
        task.uncancel()  # cancelled by SIGTERM: ended as asked
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
