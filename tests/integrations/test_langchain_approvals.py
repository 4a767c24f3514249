"""A tool that LangChain's HumanInTheLoopMiddleware guards keeps its guard
when TetherCodeMode folds it into run_code: the program's call pauses the
agent with the middleware's own interrupt, and the program goes on from
where it stopped once a person decides, in another agent and another
Runtime (as after a restart), with the LangGraph checkpointer's state."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

pytest.importorskip("langchain", reason="the langchain extra is not installed")

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from tether.integrations.langchain import TetherCodeMode

from .scenario import APPROVAL, Customer, Shop
from .test_langchain import ToolCallingFake

CONFIG: Any = {"configurable": {"thread_id": "t1"}}
ORDERS = ["code mode first", "approvals first"]
MODES = ["batched", "per_call"]


def shop_tools(shop: Shop) -> list[BaseTool]:
    return [tool(shop.get_customer), tool(shop.note_for), tool(shop.refund)]


def agent_for(shop: Shop, saver: InMemorySaver, order: str, mode: str, *,
              resumed: bool = False) -> Any:
    """The agent; ``resumed``: in the process that resumes it, where the
    model has written its program already."""
    writes = [] if resumed else [AIMessage("", tool_calls=[
        {"name": "run_code", "args": {"code": APPROVAL}, "id": "call_0"}])]
    model = ToolCallingFake(messages=iter([*writes, AIMessage("done")]))
    approvals = HumanInTheLoopMiddleware(interrupt_on={"refund": True}, interrupt_mode=mode)
    code_mode = TetherCodeMode()
    middleware = [code_mode, approvals] if order == ORDERS[0] else [approvals, code_mode]
    return create_agent(model, tools=shop_tools(shop), middleware=middleware,
                        checkpointer=saver)


def restarted(saver: InMemorySaver) -> InMemorySaver:
    """The saver's data in a new saver: what another process would read
    from a database."""
    fresh = InMemorySaver()
    fresh.storage = copy.deepcopy(saver.storage)
    fresh.writes = copy.deepcopy(saver.writes)
    fresh.blobs = copy.deepcopy(saver.blobs)
    return fresh


def decision(interrupt: Any, mode: str, decided: dict[str, Any]) -> Any:
    if mode == "batched":
        return {"decisions": [decided]}
    return {interrupt.id: decided}


def start(shop: Shop, order: str, mode: str) -> tuple[InMemorySaver, Any]:
    saver = InMemorySaver()
    agent = agent_for(shop, saver, order, mode)
    state = asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": "refund"}]},
                                      CONFIG))
    return saver, state


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", ORDERS)
def test_the_program_pauses_for_the_approval_and_goes_on_after_a_restart(
        order: str, mode: str) -> None:
    shop = Shop()
    saver, state = start(shop, order, mode)
    # The guarded tool did not run: the agent waits with the middleware's interrupt.
    assert shop.calls == ["get_customer", "note_for"]
    (interrupt,) = state["__interrupt__"]
    if mode == "batched":
        (action,) = interrupt.value["action_requests"]
        assert action["name"] == "refund" and action["args"] == {"customer_id": 7, "amount": 5}
    else:
        assert interrupt.value["name"] == "refund"
        assert interrupt.value["args"] == {"customer_id": 7, "amount": 5}

    later = Shop()  # another process: the tools' state is its own
    agent = agent_for(later, restarted(saver), order, mode, resumed=True)
    state = asyncio.run(agent.ainvoke(
        Command(resume=decision(interrupt, mode, {"type": "approve"})), CONFIG))
    assert "__interrupt__" not in state
    # Only the approved call ran there: the earlier ones came from the checkpoint.
    assert later.calls == ["refund"]
    (message,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert message.content == ('Printed:\nfound Ada\nrefund: refunded 5 to 7\n'
                               'Returned: ["Dear Ada", "refunded 5 to 7"]')


@pytest.mark.parametrize("mode", MODES)
def test_a_rejected_call_raises_in_the_program(mode: str) -> None:
    shop = Shop()
    saver, state = start(shop, ORDERS[0], mode)
    (interrupt,) = state["__interrupt__"]
    agent = agent_for(Shop(), restarted(saver), ORDERS[0], mode, resumed=True)
    state = asyncio.run(agent.ainvoke(Command(resume=decision(
        interrupt, mode, {"type": "reject", "message": "too much"})), CONFIG))
    (message,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert "Denied" in str(message.content) and "too much" in str(message.content)
    assert "refund:" not in str(message.content)


def test_without_the_middleware_the_tools_run_as_before() -> None:
    shop = Shop()
    model = ToolCallingFake(messages=iter([
        AIMessage("", tool_calls=[{"name": "run_code", "args": {"code": APPROVAL},
                                   "id": "call_0"}]),
        AIMessage("done")]))
    agent = create_agent(model, tools=shop_tools(shop), middleware=[TetherCodeMode()])
    state = asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": "refund"}]}))
    assert shop.calls == ["get_customer", "note_for", "refund"]
    (message,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert str(message.content).endswith('Returned: ["Dear Ada", "refunded 5 to 7"]')


def test_a_tool_that_interrupts_by_itself_pauses_the_program() -> None:
    asked: list[str] = []

    @tool
    def ask_user(question: str) -> str:
        """Ask the user a question.

        Args:
            question: what to ask
        """
        asked.append(question)
        return str(interrupt(question))

    program = 'a = await ask_user(question="colour?")\nreturn "likes " + a\n'

    def agent(saver: InMemorySaver, *, resumed: bool = False) -> Any:
        writes = [] if resumed else [AIMessage("", tool_calls=[
            {"name": "run_code", "args": {"code": program}, "id": "call_0"}])]
        return create_agent(ToolCallingFake(messages=iter([*writes, AIMessage("done")])),
                            tools=[ask_user], middleware=[TetherCodeMode()], checkpointer=saver)

    saver = InMemorySaver()
    state = asyncio.run(agent(saver).ainvoke({"messages": [{"role": "user", "content": "?"}]},
                                             CONFIG))
    (question,) = state["__interrupt__"]
    assert question.value == "colour?"
    state = asyncio.run(agent(restarted(saver), resumed=True).ainvoke(
        Command(resume="green"), CONFIG))
    (message,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert message.content == 'Returned: "likes green"'


def test_an_agent_run_synchronously_calls_tools_and_refuses_a_guarded_call() -> None:
    shop = Shop()

    def get_customer(id: int) -> Customer:
        """The customer with this id."""
        return asyncio.run(shop.get_customer(id))

    def refund(customer_id: int, amount: int) -> str:
        """Refund a customer."""
        return asyncio.run(shop.refund(customer_id, amount))

    model = ToolCallingFake(messages=iter([
        AIMessage("", tool_calls=[{"name": "run_code", "args": {"code": APPROVAL},
                                   "id": "call_0"}]),
        AIMessage("done")]))
    tools = [tool(get_customer), tool(shop.note_for), tool(refund)]
    code_mode = TetherCodeMode()
    agent = create_agent(model, tools=tools, checkpointer=InMemorySaver(),
                         middleware=[code_mode, HumanInTheLoopMiddleware(
                             interrupt_on={"refund": True})])
    try:
        state = agent.invoke({"messages": [{"role": "user", "content": "refund"}]}, CONFIG)
    finally:
        code_mode.close()
    assert shop.calls == ["get_customer", "note_for"]
    (message,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert "PermissionError" in str(message.content) and "ainvoke" in str(message.content)
