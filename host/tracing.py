"""OpenTelemetry spans for runs and binding calls (the ``otel`` extra).

One span per run, under the caller's current span, and one child span per
binding call named and attributed as the GenAI semantic conventions name
tool execution (``execute_tool {gen_ai.tool.name}``). The attribute names
are plain strings: the semconv package marks its ``gen_ai`` constants
deprecated. Arguments and results are recorded only when asked for.
Nothing here is imported unless a :class:`Tracing` is made.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tether.codec import Call, Result

from .result import RunResult, Status
from .run.events import Observer

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

#: The largest value, in bytes on the wire, that ``record_values`` records.
RECORDED_BYTES = 64 * 1024


class Tracing:
    """Spans for every run of a Runtime: ``Runtime(tracing=Tracing())``.

    ``tracer_provider`` defaults to OpenTelemetry's global one;
    ``record_values`` adds each call's arguments and result (as JSON text,
    ``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result``; one of
    more than RECORDED_BYTES on the wire is only named, with its size),
    which may hold what the program or the bindings should not leak to a
    trace backend. Raises ImportError without ``opentelemetry-api``
    (``pip install tether[otel]``)."""

    def __init__(self, *, tracer_provider: Any = None, record_values: bool = False) -> None:
        from opentelemetry import trace

        self._tracer: Tracer = trace.get_tracer("tether", tracer_provider=tracer_provider)
        self.record_values = record_values

    def start(self, language: str, sandbox: str) -> RunTrace:
        """The span of a run about to start, as an observer of its calls."""
        span = self._tracer.start_span("tether.run", attributes={
            "tether.language": language, "tether.sandbox": sandbox})
        return RunTrace(self._tracer, span, self.record_values)


class RunTrace(Observer):
    """One run's span and its calls' spans."""

    def __init__(self, tracer: Tracer, span: Span, record_values: bool) -> None:
        self._tracer = tracer
        self._span = span
        self._record_values = record_values
        self._calls: dict[int, Span] = {}

    def call_started(self, call: Call, size: int) -> None:
        from opentelemetry import trace

        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": str(call.id),
        }
        if self._record_values:
            attributes["gen_ai.tool.call.arguments"] = _recorded(
                {"args": call.args, "kwargs": call.kwargs}, size)
        self._calls[call.id] = self._tracer.start_span(
            f"execute_tool {call.name}", context=trace.set_span_in_context(self._span),
            kind=trace.SpanKind.INTERNAL, attributes=attributes)

    def call_ended(self, call: Call, result: Result, size: int) -> None:
        span = self._calls.pop(call.id, None)
        if span is None:
            return
        if result.error is not None:
            _failed(span, result.error.type, result.error.message)
        elif self._record_values:
            span.set_attribute("gen_ai.tool.call.result", _recorded(result.value, size))
        span.end()

    def end(self, result: RunResult | None) -> None:
        """The run ended with ``result`` (None: run() raised)."""
        for span in self._calls.values():  # calls cancelled as the run ended
            _failed(span, "Cancelled", "the run ended")
            span.end()
        self._calls.clear()
        span = self._span
        if result is None:
            _failed(span, "Cancelled", "the run was cancelled")
        else:
            stats = result.stats
            span.set_attribute("tether.status", str(result.status))
            span.set_attribute("tether.calls", stats.calls)
            span.set_attribute("tether.wall_time", stats.wall_time)
            if stats.cpu_seconds is not None:
                span.set_attribute("tether.cpu_seconds", stats.cpu_seconds)
            if stats.peak_memory_bytes is not None:
                span.set_attribute("tether.peak_memory_bytes", stats.peak_memory_bytes)
            if result.status is not Status.OK and result.error is not None:
                _failed(span, result.error.type, result.error.message)
        span.end()


def _failed(span: Span, error_type: str, message: str) -> None:
    from opentelemetry.trace import StatusCode

    span.set_attribute("error.type", error_type)
    span.set_status(StatusCode.ERROR, message)


def _recorded(value: Any, size: int) -> str:
    """``value`` as JSON text, or a mark for one of more than
    RECORDED_BYTES (``size``: its bytes on the wire): a span's attributes
    wait in the exporter's queue, and a program's values may be large."""
    if size > RECORDED_BYTES:
        return f"[tether: {size} bytes, not recorded]"
    return json.dumps(value, default=repr, ensure_ascii=False)
