"""run_code_tool in a real OpenAI Agents SDK Agent, driven by a scripted
Model (the SDK's model interface, answering without a network)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel

pytest.importorskip("agents", reason="the openai-agents extra is not installed")

from agents import (
    Agent,
    FunctionTool,
    RunConfig,
    RunContextWrapper,
    RunHooks,
    Runner,
    RunState,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrailData,
    ToolInputGuardrailTripwireTriggered,
    ToolOutputGuardrailData,
    function_tool,
    tool_input_guardrail,
    tool_output_guardrail,
)
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.tracing import FunctionSpanData, TracingProcessor, set_trace_processors
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from tether.integrations.openai_agents import code_mode, run_code_tool

from .scenario import APPROVAL, CONCURRENT, RETURNED, TYPE_ERROR, Shop, Tools


class Scripted(Model):
    """Calls run_code with each program in turn, then answers "done"; keeps
    the tools it was offered and the tool outputs it read."""

    def __init__(self, programs: list[str], *, raw: bool = False) -> None:
        self.programs = programs
        self.raw = raw  # the programs are run_code's whole arguments, as sent
        self.offered: list[Any] = []
        self.outputs: list[str] = []

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        # The SDK passes every argument by keyword.
        input, tools = kwargs["input"], kwargs["tools"]
        self.offered = list(tools)
        if isinstance(input, list):
            self.outputs = [item["output"] for item in input if isinstance(item, dict)
                            and item.get("type") == "function_call_output"]
        if self.programs:
            code = self.programs.pop(0)
            item: Any = ResponseFunctionToolCall(
                type="function_call", call_id=f"call_{len(self.outputs)}", name="run_code",
                arguments=code if self.raw else json.dumps({"code": code}))
        else:
            item = ResponseOutputMessage(
                id="msg", type="message", role="assistant", status="completed",
                content=[ResponseOutputText(type="output_text", text="done", annotations=[])])
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


def function_tools(tools: Tools) -> list[FunctionTool]:
    return [function_tool(f) for f in tools.functions()]


def play(programs: list[str], tool: FunctionTool, *, raw: bool = False,
         context: Any = None) -> tuple[Scripted, Any]:
    model = Scripted(programs, raw=raw)
    agent = Agent(name="a", instructions="Use run_code.", model=model, tools=[tool])
    result = asyncio.run(Runner.run(agent, "weather?", context=context,
                                    run_config=RunConfig(tracing_disabled=True)))
    return model, result


def test_a_program_calls_two_tools_at_once() -> None:
    tools = Tools()
    model, result = play([CONCURRENT], run_code_tool(function_tools(tools)))
    assert result.final_output == "done"
    (offered,) = model.offered
    assert offered.name == "run_code"
    assert "async def get_weather(*, city: str)" in offered.description
    assert sorted(tools.calls) == [("get_population", {"city": "Oslo"}),
                                   ("get_weather", {"city": "Oslo"})]
    assert model.outputs == [f"Printed:\nsky: overcast\nReturned: {RETURNED}"]


def test_a_type_error_comes_back_before_anything_runs() -> None:
    tools = Tools()
    model, _ = play([TYPE_ERROR], run_code_tool(function_tools(tools)))
    assert tools.calls == []
    (output,) = model.outputs
    assert output.startswith("The program was not run: the check found problems.")
    assert "line 1" in output


def test_needs_approval_goes_to_approve() -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    def remove(path: str) -> str:
        """Remove a file."""
        return f"removed {path}"

    guarded = function_tool(remove, needs_approval=True)
    program = """
try:
    first = await remove(path="a")
except BindingError as exc:
    first = exc.type
return [first, await remove(path="b")]
"""

    def approve(name: str, arguments: dict[str, Any]) -> bool:
        asked.append((name, arguments))
        return arguments["path"] == "b"

    model, _ = play([program], run_code_tool([guarded], approve=approve))
    assert asked == [("remove", {"path": "a"}), ("remove", {"path": "b"})]
    assert model.outputs == ['Returned: ["Denied", "removed b"]']


def test_code_mode_folds_an_agents_function_tools() -> None:
    tools = Tools()
    model = Scripted([CONCURRENT])
    agent = code_mode(Agent(name="a", model=model, tools=function_tools(tools)))
    asyncio.run(Runner.run(agent, "weather?", run_config=RunConfig(tracing_disabled=True)))
    assert [t.name for t in model.offered] == ["run_code"]
    assert model.outputs == [f"Printed:\nsky: overcast\nReturned: {RETURNED}"]


def remover(ran: list[str], **options: Any) -> FunctionTool:
    def remove(path: str) -> str:
        """Remove a file."""
        ran.append(path)
        return f"removed {path}"

    return function_tool(remove, **options)


@tool_input_guardrail
def no_root(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
    if json.loads(data.context.tool_arguments)["path"] == "/":
        return ToolGuardrailFunctionOutput.reject_content("refused: not /")
    return ToolGuardrailFunctionOutput.allow()


CAUGHT = """
try:
    first = await remove(path="/")
except BindingError as exc:
    first = [exc.type, exc.message]
return [first, await remove(path="tmp")]
"""


def test_a_tool_input_guardrail_refuses_a_call_before_the_tool_runs() -> None:
    ran: list[str] = []
    model, _ = play([CAUGHT], run_code_tool([remover(ran, tool_input_guardrails=[no_root])]))
    assert ran == ["tmp"]
    assert model.outputs == ['Returned: [["PermissionError", "refused: not /"], "removed tmp"]']


def test_a_tool_output_guardrail_withholds_what_the_tool_returned() -> None:
    @tool_output_guardrail
    def not_root(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        if data.output == "removed /":
            return ToolGuardrailFunctionOutput.reject_content("withheld")
        return ToolGuardrailFunctionOutput.allow()

    ran: list[str] = []
    model, _ = play([CAUGHT], run_code_tool([remover(ran, tool_output_guardrails=[not_root])]))
    assert ran == ["/", "tmp"]
    assert model.outputs == ['Returned: [["PermissionError", "withheld"], "removed tmp"]']


def test_a_guardrail_tripwire_ends_the_agent_run_as_it_would_without_tether() -> None:
    @tool_input_guardrail
    def trip(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        return ToolGuardrailFunctionOutput.raise_exception()

    ran: list[str] = []
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        play([CAUGHT], run_code_tool([remover(ran, tool_input_guardrails=[trip])]))
    assert ran == []


def test_a_tools_timeout_bounds_the_calls_a_program_makes() -> None:
    async def slow() -> str:
        """Takes its time."""
        await asyncio.sleep(10)
        return "finished late"

    model, _ = play(["return await slow()"], run_code_tool([function_tool(slow, timeout=0.2)]))
    # Without the timeout the call would have returned "finished late".
    assert model.outputs == ['Returned: "Tool \'slow\' timed out after 0.2 seconds."']


def test_a_disabled_tool_is_neither_described_nor_callable() -> None:
    ran: list[str] = []
    model = Scripted(['return await remove(path="/")'])
    agent = code_mode(Agent(name="a", model=model,
                            tools=[*function_tools(Tools()), remover(ran, is_enabled=False)]))
    asyncio.run(Runner.run(agent, "go", run_config=RunConfig(tracing_disabled=True)))
    (offered,) = model.offered
    assert "def remove" not in offered.description
    assert "def get_weather" in offered.description
    (output,) = model.outputs
    assert output.startswith("The program was not run")
    assert ran == []


def test_is_enabled_is_asked_with_the_runs_context_at_each_call() -> None:
    def once(context: RunContextWrapper[dict[str, bool]]) -> str:
        """Works once."""
        context.context["used"] = True
        return "worked"

    def unused(context: RunContextWrapper[dict[str, bool]], agent: Any) -> bool:
        return not context.context["used"]

    program = """
first = await once()
try:
    second = await once()
except BindingError as exc:
    second = exc.type
return [first, second]
"""
    tool = run_code_tool([function_tool(once, is_enabled=unused)])
    model, _ = play([program, "return await once()"], tool, context={"used": False})
    first, second = model.outputs
    assert first == 'Returned: ["worked", "PermissionError"]'
    assert second.startswith("The program was not run")


def test_bad_arguments_come_back_to_the_model_and_the_run_goes_on() -> None:
    arguments = ['{"code": "return 1"', json.dumps({"source": "return 1"})]
    model, result = play(arguments, run_code_tool(function_tools(Tools())), raw=True)
    assert result.final_output == "done"
    assert len(model.outputs) == 2
    assert all(output.startswith('run_code takes {"code": str}') for output in model.outputs)


def test_parameters_with_defaults_may_be_left_out() -> None:
    def search(query: str, limit: int = 2) -> list[str]:
        """Search documents."""
        return [f"{query} {i}" for i in range(limit)]

    model, _ = play(['return await search(query="tether")'],
                    run_code_tool([function_tool(search)]))
    assert model.outputs == ['Returned: ["tether 0", "tether 1"]']


class Weather(BaseModel):
    temp: int
    sky: str


def get_weather(city: str) -> Weather:
    """The weather now in a city."""
    return Weather(temp=6, sky="overcast")


def test_a_tool_returning_a_pydantic_model_gives_the_program_its_json() -> None:
    model, _ = play(['return (await get_weather(city="Oslo"))["sky"]'],
                    run_code_tool([function_tool(get_weather)]))
    assert model.outputs == ['Returned: "overcast"']


def test_a_tools_output_schema_describes_what_it_returns() -> None:
    tool = run_code_tool([function_tool(get_weather, output_type=Weather)])
    assert "-> Any" not in tool.description
    model, _ = play(['w = await get_weather(city="Oslo")\nreturn w["temp"] + 1'], tool)
    assert model.outputs == ["Returned: 7"]


def test_a_parameter_defaulting_to_none_may_be_left_out() -> None:
    # The SDK's strict schema drops a None default and requires the
    # parameter (null standing for "not given").
    def search(query: str, limit: int | None = None) -> str:
        """Search documents."""
        return f"{query} {limit}"

    model, _ = play(['return [await search(query="a"), await search(query="b", limit=1)]'],
                    run_code_tool([function_tool(search)]))
    assert model.outputs == ['Returned: ["a None", "b 1"]']


# -- approvals through the SDK's interruptions, hooks and spans -------------

def shop_agent(shop: Shop, programs: list[str], **options: Any) -> tuple[Scripted, Agent[Any]]:
    model = Scripted(programs)
    agent = Agent(name="shop", model=model, tools=[
        function_tool(shop.get_customer), function_tool(shop.note_for),
        function_tool(shop.refund, needs_approval=True)])
    return model, code_mode(agent, **options)


def test_a_call_that_needs_approval_interrupts_the_run_and_resumes_after_a_restart() -> None:
    shop = Shop()
    _, agent = shop_agent(shop, [APPROVAL])
    result = asyncio.run(Runner.run(agent, "refund Ada"))
    (item,) = result.interruptions
    assert item.name == "refund"
    assert json.loads(item.arguments or "") == {"customer_id": 7, "amount": 5}
    assert shop.calls == ["get_customer", "note_for"]
    saved = json.dumps(result.to_state().to_json())  # e.g. into a database

    later = Shop()  # another process, another agent, another Runtime
    model, agent = shop_agent(later, [])

    async def resume() -> Any:
        state = await RunState.from_json(agent, json.loads(saved))
        for waiting in state.get_interruptions():
            state.approve(waiting)
        return await Runner.run(agent, state)

    resumed = asyncio.run(resume())
    assert resumed.final_output == "done" and not resumed.interruptions
    assert later.calls == ["refund"]  # the earlier calls came from the checkpoint
    assert model.outputs == ['Printed:\nfound Ada\nrefund: refunded 5 to 7\n'
                             'Returned: ["Dear Ada", "refunded 5 to 7"]']


def test_a_rejected_call_raises_denied_in_the_program() -> None:
    shop = Shop()
    program = ('try:\n    await refund(customer_id=7, amount=5)\n'
               'except BindingError as e:\n    return e.type\n')
    model, agent = shop_agent(shop, [program])

    async def reject() -> Any:
        first = await Runner.run(agent, "refund")
        state = first.to_state()
        for waiting in first.interruptions:
            state.reject(waiting)
        return await Runner.run(agent, state)

    result = asyncio.run(reject())
    assert result.final_output == "done" and shop.calls == []
    assert model.outputs == ['Returned: "Denied"']


class Told(RunHooks[Any]):
    def __init__(self) -> None:
        self.told: list[str] = []

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        self.told.append(f"start {tool.name}")

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        self.told.append(f"end {tool.name}")


class Spans(TracingProcessor):
    def __init__(self) -> None:
        self.ended: list[Any] = []

    def on_trace_start(self, trace: Any) -> None: ...
    def on_trace_end(self, trace: Any) -> None: ...
    def on_span_start(self, span: Any) -> None: ...

    def on_span_end(self, span: Any) -> None:
        self.ended.append(span)

    def shutdown(self) -> None: ...
    def force_flush(self) -> None: ...


def test_each_call_of_a_program_has_its_span_and_its_hooks() -> None:
    shop, hooks, spans = Shop(), Told(), Spans()
    program = 'c = await get_customer(id=7)\nreturn await note_for(name=c["name"])\n'
    _, agent = shop_agent(shop, [program], hooks=hooks)
    set_trace_processors([spans])
    try:
        asyncio.run(Runner.run(agent, "note?", hooks=hooks))
    finally:
        set_trace_processors([])
    assert hooks.told == ["start run_code", "start get_customer", "end get_customer",
                          "start note_for", "end note_for", "end run_code"]
    functions = {span.span_data.name: span for span in spans.ended
                 if isinstance(span.span_data, FunctionSpanData)}
    assert {"run_code", "get_customer", "note_for"} <= set(functions)
    run_code = functions["run_code"]
    assert functions["get_customer"].trace_id == run_code.trace_id
    assert functions["note_for"].span_data.output == "Dear Ada"
    # Under run_code's span (through the nested run_code agent's).
    parents = {span.span_id: span.parent_id for span in spans.ended}
    inner, chain = functions["get_customer"].parent_id, []
    while inner is not None:
        chain.append(inner)
        inner = parents.get(inner)
    assert run_code.span_id in chain
