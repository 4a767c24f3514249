"""What a ``run_code`` call costs through an integration, beside the run.

    python bench/integrations.py [--repeat N]

Medians (and ranges) over N calls, with one warm Runtime throughout:
``Runtime.run`` of the two-tool program alone, with ``check=True``, then
through pydantic-ai's ``TetherCodeMode`` (a FunctionModel agent run making
one ``run_code`` call) and through ``tether mcp`` over stdio with the two
tools on an upstream MCP server (one ``call_tool`` each). With
``--frameworks``: each framework's agent run through tether's integration
(its default Runtime, kept between runs) beside the same task without it
(the model calling the two tools directly; smolagents' own
LocalPythonExecutor).
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


FRAMEWORK_PROGRAM = """\
import asyncio
weather, people = await asyncio.gather(get_weather(city="Oslo"), get_population(city="Oslo"))
return [weather["temp"], people]
"""


async def _frameworks(repeat: int) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    from tether.integrations.langchain import TetherCodeMode as LangChainCodeMode
    from tether.integrations.pydantic_ai import TetherCodeMode

    def scripted(*calls: ToolCallPart) -> FunctionModel:
        def model(messages: list[Any], info: Any) -> ModelResponse:
            if any(isinstance(p, ToolReturnPart)
                   for m in messages for p in getattr(m, "parts", [])):
                return ModelResponse(parts=[TextPart("done")])
            return ModelResponse(parts=list(calls))
        return FunctionModel(model)

    code = Agent(scripted(ToolCallPart("run_code", {"code": FRAMEWORK_PROGRAM})), tools=TOOLS,
                 capabilities=[TetherCodeMode()])
    direct = Agent(scripted(ToolCallPart("get_weather", {"city": "Oslo"}),
                            ToolCallPart("get_population", {"city": "Oslo"})), tools=TOOLS)
    print(_line("pydantic-ai, TetherCodeMode", await _timed(repeat, lambda: code.run("go"))))
    print(_line("pydantic-ai, direct calls", await _timed(repeat, lambda: direct.run("go"))))

    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    class Fake(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    tools = [tool(f) for f in TOOLS]
    middleware = LangChainCodeMode()

    def calls(*named: tuple[str, dict[str, Any]]) -> Fake:
        return Fake(messages=iter([AIMessage("", tool_calls=[
            {"name": name, "args": args, "id": f"c{i}"} for i, (name, args) in enumerate(named)]),
            AIMessage("done")]))

    async def langchain(folded: bool) -> None:
        if folded:
            agent = create_agent(calls(("run_code", {"code": FRAMEWORK_PROGRAM})), tools=tools,
                                 middleware=[middleware])
        else:
            agent = create_agent(calls(("get_weather", {"city": "Oslo"}),
                                       ("get_population", {"city": "Oslo"})), tools=tools)
        await agent.ainvoke({"messages": [{"role": "user", "content": "go"}]})

    print(_line("LangChain, TetherCodeMode", await _timed(repeat, lambda: langchain(True))))
    print(_line("LangChain, direct calls", await _timed(repeat, lambda: langchain(False))))


def _smolagents(repeat: int) -> None:
    from smolagents import tool
    from smolagents.default_tools import FinalAnswerTool
    from smolagents.local_python_executor import LocalPythonExecutor

    from tether.integrations.smolagents import TetherExecutor

    @tool
    def note_for(name: str) -> str:
        """A note to send.

        Args:
            name: to whom
        """
        return f"Dear {name}"

    step = 'n = note_for(name="Ada")\nfinal_answer(n)\n'
    for label, executor in (("smolagents, TetherExecutor", TetherExecutor()),
                            ("smolagents, LocalPythonExecutor", LocalPythonExecutor([]))):
        executor.send_tools({"note_for": note_for, "final_answer": FinalAnswerTool()})
        executor.send_variables({})
        for _ in range(3):
            executor(step)
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            assert executor(step).output == "Dear Ada"
            times.append((time.perf_counter() - started) * 1000)
        print(_line(label, times))
        if isinstance(executor, TetherExecutor):
            executor.cleanup()


def _line(name: str, times: list[float]) -> str:
    return (f"{name:<36} {statistics.median(times):7.1f} ms "
            f"({min(times):.1f}-{max(times):.1f})")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--frameworks", action="store_true")
    arguments = parser.parse_args()
    repeat = arguments.repeat
    if arguments.frameworks:
        await _frameworks(repeat)
        await asyncio.to_thread(_smolagents, repeat)
        return
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
