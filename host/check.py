"""The check before a run: the program type-checked against its bindings'
declarations before any guest starts.

A program that fails it is not run: its result has status ``invalid`` and
one :class:`RunError` per problem in ``diagnostics`` (``error`` sums them up),
so an agent loop can feed them back like any other error. A checker that is
missing, fails or takes longer than ``timeout`` does not stop the run: the
check is a help for the model, not a boundary (the argument check on every
call is the one that holds).
"""

from __future__ import annotations

from collections.abc import Iterable

from . import check_python
from .check_typescript import TypeScriptChecker
from .description import Description
from .guests import GuestUnavailable, Interpreters
from .result import RunError, RunResult, Status

#: Seconds one check may take before it is given up (and the run goes ahead).
CHECK_TIMEOUT = 10.0
#: Problems kept of one check: a model fixes the first ones first.
MAX_DIAGNOSTICS = 20


class Checker:
    """Checks programs in every language; keeps the TypeScript compiler warm."""

    def __init__(self, interpreters: Interpreters, timeout: float = CHECK_TIMEOUT) -> None:
        self._interpreters = interpreters
        self._timeout = timeout
        self._typescript: TypeScriptChecker | None = None

    async def diagnostics(self, source: str, language: str,
                          descriptions: Iterable[Description],
                          variables: Iterable[str] = ()) -> tuple[RunError, ...] | None:
        """The program's problems (empty: none; at most MAX_DIAGNOSTICS), or
        None when no checker could say. ``variables`` are the names the run
        defines before the program starts."""
        found = await self._diagnostics(source, language, descriptions, tuple(variables))
        return None if found is None else found[:MAX_DIAGNOSTICS]

    async def _diagnostics(self, source: str, language: str, descriptions: Iterable[Description],
                           variables: tuple[str, ...]) -> tuple[RunError, ...] | None:
        if language == "python":
            try:
                from ty import find_ty_bin

                ty = find_ty_bin()
            except (ImportError, FileNotFoundError):
                return None
            return await check_python.check(ty, self._interpreters.python, source,
                                            descriptions, self._timeout, variables=variables)
        if self._typescript is None:
            try:
                node = self._interpreters.node_path()
            except GuestUnavailable:
                return None
            self._typescript = TypeScriptChecker(node)
        return await self._typescript.check(source, language, descriptions, self._timeout,
                                            variables)

    async def aclose(self) -> None:
        if self._typescript is not None:
            await self._typescript.aclose()


def invalid(diagnostics: tuple[RunError, ...]) -> RunResult:
    """The result of a program that failed its check."""
    first = diagnostics[0]
    more = f" (and {len(diagnostics) - 1} more)" if len(diagnostics) > 1 else ""
    report = "".join(f"line {d.line}, column {d.column}: {d.message} [{d.type}]\n"
                     for d in diagnostics)
    error = RunError(type="TypeCheckError", message=f"{first.message}{more}",
                     traceback=report, line=first.line, column=first.column)
    return RunResult(status=Status.INVALID, error=error, diagnostics=diagnostics)
