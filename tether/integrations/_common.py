"""What every integration shares: one ``run_code`` tool, described by the
bindings' own text, checked before it runs, and reporting back as text."""

from __future__ import annotations

import asyncio
import json
import threading
import weakref
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

from tether.host import (
    Limits,
    RunEvent,
    RunResult,
    Runtime,
    SyncRuntime,
)
from tether.host.bindings import prompt
from tether.host.bindings.prepared import BindingsArg, describe_bindings

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


class Runtimes:
    """The Runtime an integration's programs run on: the one it was given,
    else one of its own per event loop, made at the first run (so its warm
    guests and its checker serve every later run) and closed with
    :meth:`aclose`, or when the loop shuts down (the end of
    ``asyncio.run``), whichever comes first."""

    def __init__(self, given: Runtime | None = None) -> None:
        self.given = given
        self._own: dict[asyncio.AbstractEventLoop, Runtime] = {}
        self._keepers: dict[asyncio.AbstractEventLoop, AsyncGenerator[None, None]] = {}
        self._lock = threading.Lock()

    async def get(self) -> Runtime:
        if self.given is not None:
            return self.given
        loop = asyncio.get_running_loop()
        with self._lock:
            runtime = self._own.get(loop)
            if runtime is not None:
                return runtime
            runtime = self._own[loop] = Runtime()
        # The loop closes unfinished async generators as it shuts down
        # (asyncio.run does): this one then closes the Runtime, so its warm
        # guests never outlive the loop they belong to.
        keeper = self._keep(loop, runtime)
        self._keepers[loop] = keeper
        await keeper.__anext__()
        return runtime

    async def _keep(self, loop: asyncio.AbstractEventLoop,
                    runtime: Runtime) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            with self._lock:
                self._own.pop(loop, None)
                self._keepers.pop(loop, None)
            await runtime.aclose()

    async def aclose(self) -> None:
        """Close the Runtime of the running loop, if one was made (a given
        Runtime is its owner's to close)."""
        keeper = self._keepers.get(asyncio.get_running_loop())
        if keeper is not None:
            await keeper.aclose()


class SyncRuntimes:
    """For a framework's synchronous calls: the :class:`tether.SyncRuntime`
    wrapping the Runtime given, else one of its own, made at the first run
    and closed by :meth:`close` or when this object is collected."""

    def __init__(self, given: Runtime | None = None) -> None:
        self._given = given
        self._own: SyncRuntime | None = None
        self._lock = threading.Lock()

    def run(self, code: str, bindings: BindingsArg, *, language: str = "python",
            limits: Limits | None = None) -> RunResult:
        """:func:`run`, blocking."""
        if self._given is not None:
            raise RuntimeError("a Runtime given to an integration runs on its event loop: "
                               "call the framework asynchronously")
        with self._lock:
            if self._own is None:
                self._own = SyncRuntime()
                weakref.finalize(self, self._own.close)
            runtime = self._own
        return runtime.run(code, language=language, bindings=bindings, limits=limits,
                           check=True)

    def close(self) -> None:
        with self._lock:
            if self._own is not None:
                self._own.close()
                self._own = None


async def run(runtimes: Runtimes, code: str, bindings: BindingsArg, *,
              language: str = "python", limits: Limits | None = None,
              variables: Mapping[str, Any] | None = None,
              on_event: Callable[[RunEvent], object] | None = None,
              check: bool = True) -> RunResult:
    """Run ``code`` with ``bindings``, type-checked first unless ``check`` is
    False (status ``invalid``: nothing ran), with ``variables`` defined in
    it where given (the result's ``variables`` are then its top-level names
    at its end)."""
    runtime = await runtimes.get()
    return await runtime.run(code, language=language, bindings=bindings, limits=limits,
                             check=check, variables=variables, on_event=on_event)


#: JSON Schema types a text result is parsed for (the tool declares it so).
_PARSED_TYPES = frozenset({"integer", "number", "boolean", "array", "object", "null"})


def value(returned: Any, who: str = "the tool",
          declared: Mapping[str, Any] | None = None) -> Any:
    """A tool's result as the value its program gets, the same way in
    every integration: values of tether's model as they are (bytes
    included), pydantic models, dataclasses, enums, dates and sets as the
    JSON values they serialize to. Text is parsed when it is JSON the
    ``declared`` result schema says it is (a number, an object...), or,
    with nothing declared, a JSON object or array (tools often send JSON
    as text). Raises TypeError saying what to return for anything else."""
    if isinstance(returned, str):
        return _parsed(returned, declared)
    if returned is None or isinstance(returned, bool | int | float | bytes):
        return returned
    if isinstance(returned, list | tuple):
        return [value(item, who) for item in returned]
    if isinstance(returned, dict) and all(isinstance(key, str) for key in returned):
        return {key: value(item, who) for key, item in returned.items()}
    from pydantic_core import PydanticSerializationError, to_jsonable_python

    try:
        return to_jsonable_python(returned, bytes_mode="utf8")
    except PydanticSerializationError:
        raise TypeError(
            f"{who} returned a {type(returned).__name__}, which a program cannot be given: "
            "return None, a bool, number, str, bytes, list or dict with str keys (for a "
            "pydantic model, its .model_dump())") from None


def _parsed(text: str, declared: Mapping[str, Any] | None) -> Any:
    if declared is None:
        if text.lstrip()[:1] not in ("{", "["):
            return text
    elif not _declares_json(declared):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _declares_json(schema: Mapping[str, Any]) -> bool:
    """Whether a result schema says the value is something else than text."""
    kinds: set[str] = set()
    for part in (schema, *schema.get("anyOf", ()), *schema.get("oneOf", ())):
        kind = part.get("type") if isinstance(part, Mapping) else None
        kinds.update(kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else [])
        if isinstance(part, Mapping) and ("properties" in part or "items" in part):
            kinds.add("object")
    return bool(kinds) and "string" not in kinds and kinds <= _PARSED_TYPES


def json_or_text(text: str) -> Any:
    """A tool's text result as a value: parsed when it is a JSON object or
    array (tools often send JSON as text), else the text."""
    return _parsed(text, None)


def value_text(value: Any) -> str:
    """A returned value as the model reads it: JSON where it can be."""
    try:
        return json.dumps(value, ensure_ascii=False, default=bytes_as_text)
    except (TypeError, ValueError):
        return repr(value)


def bytes_as_text(value: object) -> object:
    """json.dumps's default for bytes: their text."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    raise TypeError


def failure_text(result: RunResult, printed_before: str = "") -> str:
    """Why a run has no value, with what it printed (``printed_before``:
    what it printed before it was suspended and resumed): for a retry."""
    assert result.error is not None
    error = result.error
    what = ("The program was not run: the check found problems."
            if result.status == "invalid" else f"The program ended with status {result.status}.")
    parts = [what, error.traceback or f"{error.type}: {error.message}"]
    printed = printed_before + result.output
    if printed:
        parts.append("It printed:\n" + printed)
    parts += _written_below_print(result)
    return "\n".join(parts)


def _written_below_print(result: RunResult) -> list[str]:
    """What the run's processes wrote to fds 1 and 2 themselves (a
    subprocess's output, a crash message): the model would miss it otherwise."""
    written = "\n".join(text.rstrip("\n") for text in (result.raw_stdout, result.raw_stderr)
                        if text.strip())
    return ["Written outside print (by a subprocess, os.write or a crash):\n" + written] \
        if written else []


def report(result: RunResult, printed_before: str = "") -> str:
    """What the model reads back from a run, whatever its status
    (``printed_before``: as for :func:`failure_text`)."""
    if not result.ok:
        return failure_text(result, printed_before)
    parts = []
    printed = printed_before + result.output
    if printed:
        parts.append("Printed:\n" + printed.rstrip("\n"))
    parts += _written_below_print(result)
    parts.append("Returned: " + value_text(result.value))
    return "\n".join(parts)


def raised(kind: str, message: str) -> Exception:
    """An exception whose class is named ``kind``: what a resumed program's
    call raises (its BindingError carries the name and the message)."""
    kind_of_error: type[Exception] = type(kind, (Exception,), {})
    return kind_of_error(message)
