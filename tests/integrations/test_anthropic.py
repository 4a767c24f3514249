"""run_code_tool in the Anthropic SDK's real tool runner. The Messages API
is a scripted HTTP transport (httpx2.MockTransport): each response is what
the API would send, written here, not recorded from the service."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("anthropic", reason="the anthropic extra is not installed")

import httpx2
from anthropic import AsyncAnthropic, beta_async_tool, beta_tool

from tether.integrations.anthropic import run_code_tool

from .scenario import CONCURRENT, RETURNED, TYPE_ERROR, Customer, Shop, Tools


class ScriptedAPI:
    """Answers each Messages request: a run_code tool use per program, then
    "done"; keeps the requests."""

    def __init__(self, programs: list[str]) -> None:
        self.programs = programs
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        if self.programs:
            content: list[dict[str, Any]] = [{
                "type": "tool_use", "id": f"toolu_{len(self.requests)}", "name": "run_code",
                "input": {"code": self.programs.pop(0)}}]
            stop = "tool_use"
        else:
            content, stop = [{"type": "text", "text": "done"}], "end_turn"
        return httpx2.Response(200, json={
            "id": f"msg_{len(self.requests)}", "type": "message", "role": "assistant",
            "model": "claude-test", "content": content, "stop_reason": stop,
            "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})

    def tool_results(self) -> list[dict[str, Any]]:
        return [block for request in self.requests for message in request["messages"]
                if message["role"] == "user" and isinstance(message["content"], list)
                for block in message["content"] if block.get("type") == "tool_result"]


def play(programs: list[str], tools: list[Any]) -> ScriptedAPI:
    api = ScriptedAPI(programs)

    async def go() -> None:
        async with httpx2.AsyncClient(transport=httpx2.MockTransport(api)) as http:
            client = AsyncAnthropic(api_key="test", http_client=http, max_retries=0)
            runner = client.beta.messages.tool_runner(
                model="claude-test", max_tokens=100, tools=[run_code_tool(tools)],
                messages=[{"role": "user", "content": "weather?"}])
            await runner.until_done()

    asyncio.run(go())
    return api


def test_a_program_calls_two_tools_at_once() -> None:
    tools = Tools()
    api = play([CONCURRENT], [beta_async_tool(f) for f in tools.functions()])
    (offered,) = api.requests[0]["tools"]
    assert offered["name"] == "run_code"
    assert "async def get_weather(*, city: str)" in offered["description"]
    assert sorted(tools.calls) == [("get_population", {"city": "Oslo"}),
                                   ("get_weather", {"city": "Oslo"})]
    (result,) = api.tool_results()
    assert not result.get("is_error")
    assert result["content"] in (f"Printed:\nsky: overcast\nReturned: {RETURNED}", [
        {"type": "text", "text": f"Printed:\nsky: overcast\nReturned: {RETURNED}"}])


def test_a_type_error_is_an_error_result_before_anything_runs() -> None:
    tools = Tools()
    api = play([TYPE_ERROR], [beta_async_tool(f) for f in tools.functions()])
    assert tools.calls == []
    (result,) = api.tool_results()
    assert result["is_error"] is True
    assert "not run: the check found problems" in json.dumps(result["content"])


def test_a_sync_tool_is_a_binding_too() -> None:
    def double(n: int) -> int:
        """Twice n."""
        return 2 * n

    api = play(["return await double(n=21)"], [beta_tool(double)])
    (result,) = api.tool_results()
    assert "Returned: 42" in json.dumps(result["content"])


def test_tools_are_declared_by_their_annotations_and_any_value_converts() -> None:
    shop = Shop()

    async def get_record(id: int) -> Any:
        """A customer, declared as anything."""
        return Customer(id=id, name="Bo")

    program = ('c = await get_customer(id=7)\nr = await get_record(id=8)\n'
               'return [c["name"], r["name"], await note_for(name=r["name"])]')
    api = play([program], [beta_async_tool(shop.get_customer), beta_async_tool(get_record),
                           beta_tool(shop.note_for)])
    (offered,) = api.requests[0]["tools"]
    assert "async def get_customer(*, id: int) -> Customer:" in offered["description"]
    (result,) = api.tool_results()
    assert 'Returned: ["Ada", "Bo", "Dear Bo"]' in str(result["content"])
