"""The check before a run: the program type-checked against its bindings'
declarations before any guest starts.

A program that fails it is not run: its result has status ``invalid`` and
one :class:`RunError` per problem in ``diagnostics`` (``error`` sums them up),
so an agent loop can feed them back like any other error. The program is
untrusted input: the checkers read it in processes confined like guests
(host/check/processes.py), never on the event loop. A check that cannot finish (no
checker installed, a program over MAX_CHECK_SOURCE_BYTES, a checker that
fails or takes longer than ``timeout`` from the request) does not stop the
run: it goes ahead unchecked and its result says so (``result.check``). The
check is a help for the model, not a boundary (the argument check on every
call is the one that holds).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterable, Mapping

from ..bindings.description import Description
from ..guests.languages import GuestCommand, GuestUnavailable, Interpreters, Packages
from ..result import CheckReport, Diagnostics, RunError, RunResult, Status
from ..sandbox.profiles import Sandbox
from . import python as check_python
from . import typescript as check_typescript
from .processes import RETIRE_BYTES, CheckerLimits, CheckerPool, NotChecked

#: Seconds one check may take from its request, the wait for a checker
#: included, before it is given up (and the run goes ahead unchecked).
CHECK_TIMEOUT = 10.0
#: The largest program the check reads (UTF-8 bytes); a larger one runs unchecked.
MAX_CHECK_SOURCE_BYTES = 256 * 1024
#: Problems kept of one check: a model fixes the first ones first.
MAX_DIAGNOSTICS = 20
#: Characters kept of one problem's message.
MAX_MESSAGE = 2000
#: Checker processes of each language (and profile) at once; more checks
#: wait for one, within their deadline.
CHECKERS = 4


class Checker:
    """Checks programs in every language, in confined checker processes:
    a fresh ty process for each Python check, a few TypeScript compilers
    kept warm for JavaScript and TypeScript. ``seccomp`` is the filter they
    run under, for each profile, ``packages`` the third-party packages the check resolves
    (Python's, ``python_packages``)."""

    def __init__(self, interpreters: Interpreters, *,
                 seccomp: Mapping[Sandbox, bytes] | None = None,
                 packages: Packages = Packages(),  # noqa: B008 - frozen
                 timeout: float = CHECK_TIMEOUT, size: int = CHECKERS,
                 retire_bytes: int = RETIRE_BYTES) -> None:
        self._interpreters = interpreters
        self._seccomp = dict(seccomp or {})
        self._packages = packages
        self._timeout = timeout
        self._size = size
        self._retire_bytes = retire_bytes
        self._pools: dict[tuple[str, Sandbox], CheckerPool] = {}

    async def check(self, source: str, language: str, descriptions: Iterable[Description],
                    variables: Iterable[str] = (), *,
                    sandbox: Sandbox = Sandbox.NAMESPACES) -> Diagnostics:
        """The program's problems (at most MAX_DIAGNOSTICS), or no problems
        and ``checked`` False when no checker could say. ``variables`` are the
        names the run defines before the program starts; ``sandbox`` the
        profile the checker runs under (the run's)."""
        deadline = asyncio.get_running_loop().time() + self._timeout
        size = len(source.encode(errors="surrogatepass"))
        if size > MAX_CHECK_SOURCE_BYTES:
            return Diagnostics(checked=False, reason=f"the program is {size} bytes; the check "
                                                     f"reads at most {MAX_CHECK_SOURCE_BYTES}")
        try:
            found = await self._check(source, language, list(descriptions),
                                      variables=tuple(variables), sandbox=sandbox,
                                      deadline=deadline)
        except NotChecked as exc:
            return Diagnostics(checked=False, reason=str(exc))
        return Diagnostics(found[:MAX_DIAGNOSTICS])

    async def _check(self, source: str, language: str, descriptions: list[Description], *,
                     variables: tuple[str, ...], sandbox: Sandbox,
                     deadline: float) -> tuple[RunError, ...]:
        if language == "python":
            ty = check_python.find_ty()
            pool = self._pool("python", sandbox, lambda workdir: check_python.command(
                workdir, ty, self._interpreters, self._seccomp.get(sandbox, b""),
                self._packages))
            request = check_python.request(source, descriptions, variables)
            answer = await pool.ask({**request, "max_diagnostics": MAX_DIAGNOSTICS,
                                     "max_message": MAX_MESSAGE}, deadline)
            return check_python.diagnostics(answer, source)
        try:
            node = self._interpreters.node_path()
        except GuestUnavailable as exc:
            raise NotChecked(str(exc)) from None
        pool = self._pool("typescript", sandbox, lambda workdir: check_typescript.command(
            workdir, node, self._seccomp.get(sandbox, b"")))
        answer = await pool.ask(check_typescript.request(source, language, descriptions,
                                                         variables), deadline)
        return check_typescript.diagnostics(answer, source)

    def _pool(self, kind: str, sandbox: Sandbox,
              command_for: Callable[[str], GuestCommand]) -> CheckerPool:
        pool = self._pools.get((kind, sandbox))
        if pool is None:
            if kind == "python":  # one check a process: its CPU time is the check's
                pool = CheckerPool(command_for, sandbox, size=self._size, reuse=False,
                                   limits=CheckerLimits(cpu_seconds=math.ceil(self._timeout) + 1),
                                   start_timeout=self._timeout)
            else:
                pool = CheckerPool(command_for, sandbox, size=self._size, reuse=True,
                                   limits=CheckerLimits(retire_bytes=self._retire_bytes),
                                   start_timeout=self._timeout)
            self._pools[(kind, sandbox)] = pool
        return pool

    def started(self, kind: str) -> int:
        """How many checker processes of ``kind`` (``python``, ``typescript``) were started."""
        return sum(pool.started for (k, _), pool in self._pools.items() if k == kind)

    async def aclose(self) -> None:
        await asyncio.gather(*(pool.aclose() for pool in self._pools.values()))


def invalid(diagnostics: tuple[RunError, ...]) -> RunResult:
    """The result of a program that failed its check."""
    first = diagnostics[0]
    more = f" (and {len(diagnostics) - 1} more)" if len(diagnostics) > 1 else ""
    report = "".join(f"line {d.line}, column {d.column}: {d.message} [{d.type}]\n"
                     for d in diagnostics)
    error = RunError(type="TypeCheckError", message=f"{first.message}{more}",
                     traceback=report, line=first.line, column=first.column)
    return RunResult(status=Status.INVALID, error=error, diagnostics=diagnostics,
                     check=CheckReport(checked=True))
