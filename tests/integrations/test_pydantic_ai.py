"""TetherCodeMode in a real pydantic-ai Agent, driven by FunctionModel."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import TypeAdapter

pytest.importorskip("pydantic_ai", reason="the pydantic-ai extra is not installed")

from pydantic_ai import (
    Agent,
    DeferredToolRequests,
    ExternalToolset,
    RunContext,
    Tool,
    ToolDefinition,
)
from pydantic_ai.capabilities import HandleDeferredToolCalls
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import (
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.tool_manager import ToolManager
from pydantic_ai.tools import ToolDenied

from tether.integrations.pydantic_ai import ProgramPrinted, TetherCodeMode

from .scenario import APPROVAL, CONCURRENT, RETURNED, TYPE_ERROR, Shop, Tools


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


def shop_agent(shop: Shop, programs: list[str], seen: list[Any], infos: list[AgentInfo],
               **options: Any) -> Agent[None, str | DeferredToolRequests]:
    options.setdefault("capabilities", [TetherCodeMode()])
    agent = Agent(scripted(programs, seen, infos), output_type=[str, DeferredToolRequests],
                  tools=[shop.get_customer, shop.note_for], **options)
    agent.tool_plain(requires_approval=True)(shop.refund)
    return agent


def test_a_call_that_needs_approval_ends_the_run_and_goes_on_after_a_restart() -> None:
    shop, seen, infos = Shop(), [], []
    result = asyncio.run(shop_agent(shop, [APPROVAL], seen, infos).run("refund Ada"))
    (run_code,) = infos[0].function_tools  # refund is one of its functions
    assert "async def refund(*, customer_id: int, amount: int) -> str" in (
        run_code.description or "")
    requests = result.output
    assert isinstance(requests, DeferredToolRequests)
    (waiting,) = requests.approvals
    assert waiting.tool_name == "run_code"
    about = requests.metadata[waiting.tool_call_id]
    assert about["tool_name"] == "refund" and about["args"] == {"customer_id": 7, "amount": 5}
    assert shop.calls == ["get_customer", "note_for"]

    # Another process: the stored conversation and the decision, a new
    # agent, a new Runtime.
    stored = ModelMessagesTypeAdapter.dump_json(result.all_messages())
    as_json = TypeAdapter(DeferredToolRequests)
    kept = as_json.validate_json(as_json.dump_json(requests))
    later, seen = Shop(), []
    approved = asyncio.run(shop_agent(later, [], seen, []).run(
        message_history=ModelMessagesTypeAdapter.validate_json(stored),
        deferred_tool_results=kept.build_results(approvals={waiting.tool_call_id: True},
                                                 metadata=kept.metadata)))
    assert approved.output == "done"
    assert later.calls == ["refund"]  # the earlier calls came from the checkpoint
    (returned,) = seen
    assert returned.content == ('Printed:\nfound Ada\nrefund: refunded 5 to 7\n'
                                'Returned: ["Dear Ada", "refunded 5 to 7"]')


def test_an_approval_without_the_requests_metadata_is_refused_not_rerun() -> None:
    """Run again from its start, the program would make its earlier calls again."""
    shop, seen, infos = Shop(), [], []
    result = asyncio.run(shop_agent(shop, [APPROVAL], seen, infos).run("refund Ada"))
    requests = result.output
    assert isinstance(requests, DeferredToolRequests)
    (waiting,) = requests.approvals
    later = Shop()
    with pytest.raises(UserError, match=r"metadata=requests\.metadata"):
        asyncio.run(shop_agent(later, [], [], []).run(
            message_history=result.all_messages(),
            deferred_tool_results=requests.build_results(approvals={waiting.tool_call_id: True})))
    assert later.calls == []


def test_a_handler_capability_answers_the_approval_inside_the_run() -> None:
    asked: list[str] = []

    async def decide(ctx: RunContext[Any], requests: DeferredToolRequests) -> Any:
        asked.extend(call.tool_name for call in requests.approvals)
        return requests.build_results(approvals={
            call.tool_call_id: ToolDenied("not today") for call in requests.approvals})

    shop, seen = Shop(), []
    program = ("try:\n    await refund(customer_id=7, amount=5)\n"
               "except BindingError as e:\n    return [e.type, str(e)]\n")
    agent = shop_agent(shop, [program], seen, [], capabilities=[
        TetherCodeMode(), HandleDeferredToolCalls(handler=decide)])
    result = asyncio.run(agent.run("refund"))
    assert result.output == "done" and asked == ["refund"] and shop.calls == []
    (returned,) = seen
    assert returned.content == 'Returned: ["Denied", "Denied: not today"]'


def test_each_call_of_a_program_shows_in_the_event_stream() -> None:
    shop, seen = Shop(), []
    program = ('c = await get_customer(id=7)\nprint("hello", c["name"])\n'
               'await note_for(name=c["name"])\n')
    respond = scripted([program], seen, []).function
    assert respond is not None

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        for part in respond(messages, info).parts:  # type: ignore[union-attr]
            if isinstance(part, ToolCallPart):
                yield {0: DeltaToolCall(name=part.tool_name, json_args=part.args_as_json_str(),
                                        tool_call_id=part.tool_call_id)}
            elif isinstance(part, TextPart):
                yield part.content

    agent = Agent(FunctionModel(respond, stream_function=stream),
                  tools=[shop.get_customer, shop.note_for], capabilities=[TetherCodeMode()])

    got: list[Any] = []

    async def handler(ctx: RunContext[Any], events: AsyncIterable[Any]) -> None:
        got.extend([event async for event in events])

    asyncio.run(agent.run("hi", event_stream_handler=handler))
    calls = [event.part.tool_name for event in got if isinstance(event, FunctionToolCallEvent)]
    assert calls == ["run_code", "get_customer", "note_for"]
    results = {event.part.tool_name: event.part.content for event in got
               if isinstance(event, FunctionToolResultEvent)}
    assert results["get_customer"] == {"id": 7, "name": "Ada"}
    assert results["note_for"] == "Dear Ada"
    (printed,) = [event for event in got if isinstance(event, ProgramPrinted)]
    assert printed.text == "hello Ada\n" and printed.stream == "stdout"
    # A bare expression at the end is the program's value.
    assert seen[0].content == 'Printed:\nhello Ada\nReturned: "Dear Ada"'


def test_a_selector_and_a_call_budget() -> None:
    shop, seen, infos = Shop(), [], []
    program = ('await note_for(name="a")\ntry:\n    await note_for(name="b")\n'
               'except BindingError as e:\n    return str(e)\n')
    agent = Agent(scripted([program], seen, infos), tools=[shop.get_customer, shop.note_for],
                  capabilities=[TetherCodeMode(
                      tools=lambda ctx, tool: tool.name == "note_for", max_tool_calls=1)])
    asyncio.run(agent.run("notes?"))
    offered = {tool.name: tool for tool in infos[0].function_tools}
    assert sorted(offered) == ["get_customer", "run_code"]
    assert "def note_for" in (offered["run_code"].description or "")
    assert shop.calls == ["note_for"]
    assert "as many as one run_code call may make" in str(seen[0].content)


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
