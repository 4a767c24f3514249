"""TetherCodeMode in a real pydantic-ai Agent, driven by FunctionModel."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="the pydantic-ai extra is not installed")

from pydantic_ai import (
    Agent,
    DeferredToolRequests,
    DeferredToolResults,
    ExternalToolset,
    Tool,
    ToolDefinition,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tool_manager import ToolManager

from tether.integrations.pydantic_ai import TetherCodeMode

from .scenario import CONCURRENT, RETURNED, TYPE_ERROR, Tools


def scripted(programs: list[str], seen: list[Any], infos: list[AgentInfo]) -> FunctionModel:
    """Writes each program in turn as a run_code call, then answers with
    what the last one gave back."""
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        infos.append(info)
        last = messages[-1]
        if isinstance(last, ModelRequest):
            for part in last.parts:
                if isinstance(part, ToolReturnPart | RetryPromptPart):
                    seen.append(part)
        if programs:
            return ModelResponse(parts=[ToolCallPart("run_code", {"code": programs.pop(0)})])
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(respond)


def agent_with(tools: Tools, programs: list[str], seen: list[Any],
               infos: list[AgentInfo]) -> Agent[None, str]:
    return Agent(scripted(programs, seen, infos), tools=tools.functions(),
                 capabilities=[TetherCodeMode()])


def test_the_model_sees_one_tool_declaring_the_others() -> None:
    tools, seen, infos = Tools(), [], []
    asyncio.run(agent_with(tools, [], seen, infos).run("hi"))
    (run_code,) = infos[0].function_tools
    assert run_code.name == "run_code"
    assert "async def get_weather(*, city: str)" in (run_code.description or "")
    assert "How many people live in a city." in (run_code.description or "")


def test_a_program_calls_two_tools_at_once() -> None:
    tools, seen, infos = Tools(), [], []
    result = asyncio.run(agent_with(tools, [CONCURRENT], seen, infos).run("weather?"))
    assert result.output == "done"
    assert sorted(tools.calls) == [("get_population", {"city": "Oslo"}),
                                   ("get_weather", {"city": "Oslo"})]
    (returned,) = seen
    assert isinstance(returned, ToolReturnPart)
    assert returned.content == f"Printed:\nsky: overcast\nReturned: {RETURNED}"


def test_a_type_error_is_a_retry_before_anything_runs() -> None:
    tools, seen, infos = Tools(), [], []
    asyncio.run(agent_with(tools, [TYPE_ERROR], seen, infos).run("people?"))
    assert tools.calls == []
    (retry,) = seen
    # pydantic-ai gives a ModelRetry back as a tool return marked "retried".
    assert isinstance(retry, ToolReturnPart)
    assert retry.outcome == "retried"
    assert "not run: the check found problems" in str(retry.content)
    assert "line 1" in str(retry.content)


def offered_then(calls: list[ToolCallPart], infos: list[AgentInfo]) -> FunctionModel:
    """Makes ``calls`` in its first response (keeping what it was offered),
    then answers "done"."""
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        infos.append(info)
        if len(messages) == 1:
            return ModelResponse(parts=list(calls))
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(respond)


def test_a_tool_that_needs_approval_stays_an_ordinary_tool_and_the_run_asks_for_approval(
) -> None:
    deleted: list[str] = []
    infos: list[AgentInfo] = []
    call = ToolCallPart("delete_file", {"path": "/tmp/x"}, tool_call_id="delete")
    agent = Agent(offered_then([call], infos), output_type=[str, DeferredToolRequests],
                  tools=Tools().functions(), capabilities=[TetherCodeMode()])

    @agent.tool_plain(requires_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return "deleted"

    result = asyncio.run(agent.run("delete it"))
    offered = {tool.name: tool for tool in infos[0].function_tools}
    assert sorted(offered) == ["delete_file", "run_code"]
    assert offered["delete_file"].kind == "unapproved"
    assert "delete_file" not in (offered["run_code"].description or "")
    assert "async def get_weather" in (offered["run_code"].description or "")
    assert isinstance(result.output, DeferredToolRequests)
    assert [part.tool_name for part in result.output.approvals] == ["delete_file"]
    assert deleted == []

    approved = asyncio.run(agent.run(
        message_history=result.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"delete": True})))
    assert approved.output == "done"
    assert deleted == ["/tmp/x"]


def test_an_external_tool_stays_an_ordinary_tool_and_the_run_defers_its_call() -> None:
    infos: list[AgentInfo] = []
    external = ExternalToolset([ToolDefinition(
        name="ask_user", description="Ask the user a question.",
        parameters_json_schema={"type": "object", "properties": {"q": {"type": "string"}},
                                "required": ["q"]})])
    call = ToolCallPart("ask_user", {"q": "ok?"})
    agent = Agent(offered_then([call], infos), output_type=[str, DeferredToolRequests],
                  toolsets=[external], tools=Tools().functions(),
                  capabilities=[TetherCodeMode()])
    result = asyncio.run(agent.run("go"))
    offered = {tool.name: tool for tool in infos[0].function_tools}
    assert sorted(offered) == ["ask_user", "run_code"]
    assert offered["ask_user"].kind == "external"
    assert "ask_user" not in (offered["run_code"].description or "")
    assert isinstance(result.output, DeferredToolRequests)
    assert [part.tool_name for part in result.output.calls] == ["ask_user"]


@dataclass
class Rows:
    """A sequential tool and an ordinary one, recording which calls were
    running at once."""

    running: set[str] = field(default_factory=set)
    overlaps: list[tuple[str, set[str]]] = field(default_factory=list)

    async def _run(self, label: str) -> int:
        self.overlaps.append((label, set(self.running)))
        self.running.add(label)
        await asyncio.sleep(0.2)
        self.running.discard(label)
        self.overlaps.append((label, set(self.running)))
        return int(label.split("_")[1])

    def met(self) -> set[tuple[str, ...]]:
        """The pairs of calls that were running at once."""
        return {tuple(sorted((label, other)))
                for label, others in self.overlaps for other in others}

    async def read_row(self, n: int) -> int:
        """Read a row."""
        return await self._run(f"read_{n}")

    async def write_row(self, n: int) -> int:
        """Append a row (not safe to run alongside anything else)."""
        return await self._run(f"write_{n}")


#: Five calls at once: two reads, a write, two reads.
ROWS = """\
import asyncio
return await asyncio.gather(read_row(n=0), read_row(n=1), write_row(n=2),
                            read_row(n=3), read_row(n=4))
"""


def test_a_sequential_tool_called_from_a_program_runs_alone() -> None:
    rows, seen, infos = Rows(), [], []
    agent = Agent(scripted([ROWS], seen, infos), capabilities=[TetherCodeMode()],
                  tools=[Tool(rows.read_row), Tool(rows.write_row, sequential=True)])
    asyncio.run(agent.run("rows"))
    (returned,) = seen
    assert returned.content == "Returned: [0, 1, 2, 3, 4]"
    # The write started after the reads before it had ended, and the reads
    # after it once it had; the reads on either side of it ran two at once.
    assert rows.met() == {("read_0", "read_1"), ("read_3", "read_4")}


def test_a_run_in_sequential_mode_makes_a_programs_calls_one_at_a_time() -> None:
    rows, seen, infos = Rows(), [], []
    agent = Agent(scripted([ROWS], seen, infos), capabilities=[TetherCodeMode()],
                  tools=[rows.read_row, rows.write_row])

    async def play() -> None:
        with ToolManager.parallel_execution_mode("sequential"):
            await agent.run("rows")

    asyncio.run(play())
    assert [part.content for part in seen] == ["Returned: [0, 1, 2, 3, 4]"]
    assert rows.met() == set()
