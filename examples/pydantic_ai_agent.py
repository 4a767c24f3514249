"""A pydantic-ai agent whose tools the model calls from one program.

    python examples/pydantic_ai_agent.py

Offline: FunctionModel stands in for the model, writing the program a model
would write for run_code, then answering with what it got back. One tool
returns a pydantic model, one is sync, one needs a person's approval: the
run stops there, and goes on once the approval is given (here in the same
process; the stored messages and requests could be read by another).
"""

from __future__ import annotations

import asyncio
from pydantic import BaseModel, TypeAdapter
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tether.integrations.pydantic_ai import TetherCodeMode

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


async def get_customer(id: int) -> Customer:
    """The customer with this id."""
    return Customer(id=id, name="Ada")


def note_for(name: str) -> str:
    """A note to send to a customer."""
    return f"Dear {name}, your refund is on its way."


async def refund(customer_id: int, amount: int) -> str:
    """Refund a customer: a person approves each refund."""
    return f"refunded {amount} to customer {customer_id}"


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    (run_code,) = info.function_tools  # the agent's three tools, folded into one
    returned = [p for m in messages for p in getattr(m, "parts", [])
                if isinstance(p, ToolReturnPart)]
    if not returned:
        print("The model sees one tool:", run_code.name)
        return ModelResponse(parts=[ToolCallPart("run_code", {"code": PROGRAM})])
    return ModelResponse(parts=[TextPart(f"Done: {returned[-1].content}")])


def agent() -> Agent[None, str | DeferredToolRequests]:
    made = Agent(FunctionModel(model), output_type=[str, DeferredToolRequests],
                 tools=[get_customer, note_for], capabilities=[TetherCodeMode()])
    made.tool_plain(requires_approval=True)(refund)
    return made


async def main() -> None:
    first = await agent().run("Refund Ada 5.")
    requests = first.output
    assert isinstance(requests, DeferredToolRequests)
    (waiting,) = requests.approvals
    asked = requests.metadata[waiting.tool_call_id]
    print("The program waits for approval of", asked["tool_name"], asked["args"])

    # Stored, e.g. in a database, until a person decides.
    as_json = TypeAdapter(DeferredToolRequests)
    stored = (ModelMessagesTypeAdapter.dump_json(first.all_messages()),
              as_json.dump_json(requests))

    messages, requests = (ModelMessagesTypeAdapter.validate_json(stored[0]),
                          as_json.validate_json(stored[1]))
    decided = requests.build_results(approvals={waiting.tool_call_id: True},
                                     metadata=requests.metadata)
    result = await agent().run(message_history=messages, deferred_tool_results=decided)
    print(result.output)


if __name__ == "__main__":
    asyncio.run(main())
