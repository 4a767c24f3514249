"""An OpenAI Agents SDK agent with one run_code tool in front of its tools.

    python examples/openai_agents_agent.py

Offline: a scripted Model (the SDK's model interface) writes the program a
model would write, then answers with the tool's output. One tool returns a
pydantic model, one is sync, one needs a person's approval: the run stops
there with the SDK's interruption, its state is stored as JSON, and a new
agent goes on from it once the approval is given.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agents import Agent, RunConfig, RunHooks, Runner, RunState, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from pydantic import BaseModel

from tether.integrations.openai_agents import code_mode

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


@function_tool
async def get_customer(id: int) -> Customer:
    """The customer with this id."""
    return Customer(id=id, name="Ada")


@function_tool
def note_for(name: str) -> str:
    """A note to send to a customer."""
    return f"Dear {name}, your refund is on its way."


@function_tool(needs_approval=True)
async def refund(customer_id: int, amount: int) -> str:
    """Refund a customer: a person approves each refund."""
    return f"refunded {amount} to customer {customer_id}"


class ScriptedModel(Model):
    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        outputs = [item["output"] for item in kwargs["input"]
                   if isinstance(item, dict) and item.get("type") == "function_call_output"]
        if not outputs:
            item: Any = ResponseFunctionToolCall(type="function_call", call_id="call_1",
                                                 name="run_code",
                                                 arguments=json.dumps({"code": PROGRAM}))
        else:
            item = ResponseOutputMessage(id="m", type="message", role="assistant",
                                         status="completed", content=[ResponseOutputText(
                                             type="output_text", annotations=[],
                                             text=f"Done: {outputs[-1]}")])
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class Told(RunHooks[Any]):
    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        print("calling", tool.name)  # run_code, then each call its program makes


HOOKS = Told()
CONFIG = RunConfig(tracing_disabled=True)


def agent() -> Agent[Any]:
    return code_mode(Agent(name="shop", model=ScriptedModel(),
                           tools=[get_customer, note_for, refund]), hooks=HOOKS)


async def main() -> None:
    first = await Runner.run(agent(), "Refund Ada 5.", hooks=HOOKS, run_config=CONFIG)
    (waiting,) = first.interruptions
    print("The program waits for approval of", waiting.name, waiting.arguments)
    stored = json.dumps(first.to_state().to_json())  # e.g. in a database

    again = agent()  # in another process, say
    state = await RunState.from_json(again, json.loads(stored))
    for item in state.get_interruptions():
        state.approve(item)
    result = await Runner.run(again, state, hooks=HOOKS, run_config=CONFIG)
    print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
