"""The pre-run check for TypeScript and JavaScript programs: the TypeScript
compiler against the bindings' ``.d.ts``, in one long-lived Node process
(``guest/node/check.mjs``) so that a check does not pay the compiler's
start-up and the library files are parsed once.

TypeScript programs get the compiler's errors (``strict``, implicit
``any`` allowed); JavaScript programs go through ``checkJs`` and keep only
what it knows for sure: unknown names, argument counts and the types of
arguments written out in the call. The checker is host-side tooling: it reads the
program as text, never runs it. Checks are answered one at a time; one that
takes longer than its timeout ends the process (the next check starts
another) and says nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from . import stubs_typescript
from .description import Description
from .paths import GUEST_DIR
from .result import RunError

_GUEST_NAMES = """
declare class BindingError extends Error {
  readonly binding: string;
  readonly type: string;
  readonly code: number;
  readonly message: string;
}
"""
#: Largest answer line read from the checker.
_MAX_LINE = 16 * 1024 * 1024


def declarations(descriptions: Iterable[Description]) -> str:
    return stubs_typescript.render(descriptions) + _GUEST_NAMES


class TypeScriptChecker:
    """One ``node check.mjs`` process, started at the first check."""

    def __init__(self, node: str) -> None:
        self._node = node
        self._process: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        self._next_id = 0

    async def check(self, source: str, language: str, descriptions: Iterable[Description],
                    timeout: float, variables: Sequence[str] = ()) -> tuple[RunError, ...] | None:
        """The program's errors (empty: none); None when the checker could
        not say (in time, or at all: a run with a variable it cannot declare,
        guest/node/check.mjs). ``variables``: the names the run defines before
        the program starts (of any type to the check)."""
        request = {"language": language, "declarations": declarations(descriptions),
                   "source": source, "variables": list(variables)}
        async with self._lock:
            try:
                async with asyncio.timeout(timeout):
                    answer = await self._ask(request)
            except (TimeoutError, OSError, ValueError, EOFError):
                await self._stop()
                return None
        if answer.get("diagnostics") is None:  # an error, or a name it cannot declare
            return None
        last = max(1, len(source.splitlines()))
        return tuple(
            RunError(type=f"TS{d['code']}", message=str(d["message"]),
                     line=None if d.get("line") is None else min(int(d["line"]), last),
                     column=d.get("column"))
            for d in answer["diagnostics"] if d.get("in") != "declarations")

    async def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        process = self._process
        if process is None or process.returncode is not None:
            process = self._process = await asyncio.create_subprocess_exec(
                self._node, str(GUEST_DIR / "node" / "check.mjs"),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL, limit=_MAX_LINE)
        assert process.stdin is not None and process.stdout is not None
        self._next_id += 1
        process.stdin.write(json.dumps({"id": self._next_id, **request}).encode() + b"\n")
        await process.stdin.drain()
        while True:
            line = await process.stdout.readline()
            if not line:
                raise EOFError("the checker ended")
            answer: dict[str, Any] = json.loads(line)
            if answer.get("id") == self._next_id:
                return answer

    async def _stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()

    async def aclose(self) -> None:
        async with self._lock:
            await self._stop()
