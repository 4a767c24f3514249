"""A LangChain agent (create_agent, a LangGraph graph) whose tools the
TetherCodeMode middleware folds into one run_code tool.

    python examples/langchain_agent.py

Offline: LangChain's fake chat model, taught to accept tools, writes the
program a model would write, then answers. One tool returns a pydantic
model, one is sync, one HumanInTheLoopMiddleware guards: the agent stops
there with the middleware's interrupt, and goes on once it is approved
(here a second agent over the same checkpointer, as another process would
be over a database's).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel

from tether.integrations.langchain import TetherCodeMode

PROGRAM = """\
customer = await get_customer(id=7)
note = await note_for(name=customer["name"])
done = await refund(customer_id=customer["id"], amount=5)
print(done)
return [note, done]
"""


class Customer(BaseModel):
    id: int
    name: str


@tool
async def get_customer(id: int) -> Customer:
    """The customer with this id."""
    return Customer(id=id, name="Ada")


@tool
def note_for(name: str) -> str:
    """A note to send to a customer."""
    return f"Dear {name}, your refund is on its way."


@tool
async def refund(customer_id: int, amount: int) -> str:
    """Refund a customer: a person approves each refund."""
    return f"refunded {amount} to customer {customer_id}"


class FakeToolModel(GenericFakeChatModel):
    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        print("The model sees:", [getattr(t, "name", t) for t in tools])
        return self


def agent(replies: list[AIMessage], saver: InMemorySaver) -> Any:
    return create_agent(FakeToolModel(messages=iter(replies)),
                        tools=[get_customer, note_for, refund], checkpointer=saver,
                        middleware=[TetherCodeMode(),
                                    HumanInTheLoopMiddleware(interrupt_on={"refund": True})])


async def main() -> None:
    saver = InMemorySaver()  # a database's checkpointer in production
    config: RunnableConfig = {"configurable": {"thread_id": "refund-ada"}}
    writes = AIMessage("", tool_calls=[{"name": "run_code", "args": {"code": PROGRAM},
                                        "id": "c1"}])
    state = await agent([writes], saver).ainvoke(
        {"messages": [{"role": "user", "content": "Refund Ada 5."}]}, config)
    (interrupt,) = state["__interrupt__"]
    (action,) = interrupt.value["action_requests"]
    print("The agent waits for a decision on", action["name"], action["args"])

    later = agent([AIMessage("Refunded, and Ada has her note.")], saver)
    state = await later.ainvoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    for message in state["messages"][1:]:
        print(f"{message.type}: {message.content}")


if __name__ == "__main__":
    asyncio.run(main())
