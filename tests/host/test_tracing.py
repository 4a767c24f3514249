"""Spans of runs and binding calls, read back from the SDK's in-memory
exporter; real guests in both languages."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import pytest

from tether import Runtime

from .conftest import LANGUAGES

sdk = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)

from tether.host.tracing import Tracing  # noqa: E402

pytestmark = pytest.mark.memory_guest


def add(a: int, b: int) -> int:
    return a + b


def fail() -> None:
    raise ValueError("no")


def echo(text: str) -> str:
    return text


PROGRAMS = {
    "python": "x = await add(1, 2)\ntry:\n    await fail()\nexcept BindingError:\n    pass\n"
              "return x",
    "javascript": "const x = await add(1, 2)\ntry { await fail() } catch (e) {}\nreturn x",
}


def _traced(language: str, record_values: bool = False,
            program: str | None = None) -> tuple[Any, list[Any]]:
    exporter = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("the app")

    async def go() -> Any:
        tracing = Tracing(tracer_provider=provider, record_values=record_values)
        async with Runtime(tracing=tracing, pool=None) as rt:
            with tracer.start_as_current_span("agent step"):
                return await rt.run(program or PROGRAMS[language], language=language,
                                    bindings=[add, fail, echo])

    result = asyncio.run(go())
    return result, list(exporter.get_finished_spans())


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_run_and_its_calls_are_spans_under_the_callers(language: str) -> None:
    result, spans = _traced(language)
    assert result.value == 3
    by_name = {s.name: s for s in spans}
    outer, run = by_name["agent step"], by_name["tether.run"]
    ok, failed = by_name["execute_tool add"], by_name["execute_tool fail"]
    assert run.parent.span_id == outer.context.span_id
    assert ok.parent.span_id == failed.parent.span_id == run.context.span_id
    assert ok.attributes["gen_ai.operation.name"] == "execute_tool"
    assert ok.attributes["gen_ai.tool.name"] == "add"
    assert ok.attributes["gen_ai.tool.call.id"]
    assert "error.type" not in ok.attributes
    assert "gen_ai.tool.call.arguments" not in ok.attributes
    assert failed.attributes["error.type"] == "ValueError"
    assert failed.status.status_code is trace.StatusCode.ERROR
    assert run.attributes["tether.status"] == "ok"
    assert run.attributes["tether.language"] == language
    assert run.attributes["tether.calls"] == 2
    assert "tether.sandbox" in run.attributes and run.attributes["tether.wall_time"] > 0


def test_values_only_when_asked() -> None:
    _, spans = _traced("python", record_values=True)
    add_span = next(s for s in spans if s.name == "execute_tool add")
    assert add_span.attributes["gen_ai.tool.call.arguments"] == '{"args": [1, 2], "kwargs": {}}'
    assert add_span.attributes["gen_ai.tool.call.result"] == "3"


def test_a_large_value_is_named_not_recorded() -> None:
    """Spans wait in the exporter's queue: a program's 100 KB argument, and
    the result that echoes it, would wait there too."""
    result, spans = _traced("python", record_values=True,
                            program="return len(await echo('x' * 100_000))")
    assert result.value == 100_000
    span = next(s for s in spans if s.name == "execute_tool echo")
    for attribute in ("gen_ai.tool.call.arguments", "gen_ai.tool.call.result"):
        text = span.attributes[attribute]
        assert text.startswith("[tether: 1000") and text.endswith(" bytes, not recorded]")


def test_nothing_of_opentelemetry_is_imported_without_tracing() -> None:
    code = ("import asyncio, sys, tether\n"
            "async def go():\n"
            "    async with tether.Runtime(pool=None) as rt:\n"
            "        assert (await rt.run('return 1')).value == 1\n"
            "asyncio.run(go())\n"
            "assert not any(m.startswith('opentelemetry') for m in sys.modules), 'imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
