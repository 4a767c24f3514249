"""What every integration shares: one ``run_code`` tool, described by the
bindings' own text, checked before it runs, and reporting back as text."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from tether.host import Limits, RunResult, Runtime, prompt
from tether.host.bindings import BindingsArg, describe_bindings

#: The name of the tool every integration offers.
RUN_CODE = "run_code"

#: The tool's arguments: the program's source.
CODE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"code": {"type": "string", "description": "the program's source"}},
    "required": ["code"],
    "additionalProperties": False,
}


def description(runtime: Runtime | None, bindings: BindingsArg, language: str = "python",
                limits: Limits | None = None) -> str:
    """The tool's description: what the tool does, then the text
    :meth:`tether.Runtime.describe` gives for ``bindings``."""
    text = (runtime.describe(bindings, language=language, limits=limits)
            if runtime is not None else
            prompt.text(describe_bindings(bindings), language, limits or Limits()))
    return ("Run a program in a fresh sandboxed process and get back what it printed "
            "and returned. Use it to call the functions below, several at once, and "
            "to compute with their results.\n\n" + text)


@asynccontextmanager
async def runtime_for(runtime: Runtime | None) -> AsyncIterator[Runtime]:
    """``runtime``, or a Runtime for this one run (closed after it)."""
    if runtime is not None:
        yield runtime
        return
    async with Runtime(pool=None) as fresh:
        yield fresh


async def run(runtime: Runtime | None, code: str, bindings: BindingsArg, *,
              language: str = "python", limits: Limits | None = None,
              variables: Mapping[str, Any] | None = None) -> RunResult:
    """Run ``code`` with ``bindings``, type-checked first (status ``invalid``:
    nothing ran), with ``variables`` defined in it where given (the
    result's ``variables`` are then its top-level names at its end)."""
    async with runtime_for(runtime) as rt:
        return await rt.run(code, language=language, bindings=bindings, limits=limits,
                            check=True, variables=variables)


def jsonable(value: Any) -> Any:
    """A framework's tool result (a pydantic model, say) as the JSON values
    it serializes to: what the tool's declaration shows."""
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value, bytes_mode="utf8")


def json_or_text(text: str) -> Any:
    """A tool's text result as a value: parsed when it is a JSON object or
    array (tools often send JSON as text), else the text."""
    if text.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


def value_text(value: Any) -> str:
    """A returned value as the model reads it: JSON where it can be."""
    try:
        return json.dumps(value, ensure_ascii=False, default=_bytes)
    except (TypeError, ValueError):
        return repr(value)


def _bytes(value: object) -> object:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    raise TypeError


def failure_text(result: RunResult) -> str:
    """Why a run has no value, with what it printed: for a retry."""
    assert result.error is not None
    error = result.error
    what = ("The program was not run: the check found problems."
            if result.status == "invalid" else f"The program ended with status {result.status}.")
    parts = [what, error.traceback or f"{error.type}: {error.message}"]
    if result.output:
        parts.append("It printed:\n" + result.output)
    parts += _written_below_print(result)
    return "\n".join(parts)


def _written_below_print(result: RunResult) -> list[str]:
    """What the run's processes wrote to fds 1 and 2 themselves (a
    subprocess's output, a crash message): the model would miss it otherwise."""
    written = "\n".join(text.rstrip("\n") for text in (result.raw_stdout, result.raw_stderr)
                        if text.strip())
    return ["Written outside print (by a subprocess, os.write or a crash):\n" + written] \
        if written else []


def report(result: RunResult) -> str:
    """What the model reads back from a run, whatever its status."""
    if not result.ok:
        return failure_text(result)
    parts = []
    if result.output:
        parts.append("Printed:\n" + result.output.rstrip("\n"))
    parts += _written_below_print(result)
    parts.append("Returned: " + value_text(result.value))
    return "\n".join(parts)
