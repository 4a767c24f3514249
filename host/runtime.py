"""The embedding API: ``Runtime.run()``."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from types import TracebackType

from .bindings import BindingsArg, prepare_bindings
from .guests import LANGUAGES, Interpreters
from .limits import Limits
from .result import RunResult
from .session import Session


class Runtime:
    """Runs programs, each in a fresh guest process.

    ``limits`` are the defaults for every run; ``env`` adds variables to the
    guest's otherwise empty environment; ``python`` and ``node`` are the
    interpreters the guests run on (default: this Python, and ``node`` found
    on PATH once). A Runtime is cheap; use it as
    an async context manager so that closing it ends runs still going
    (their result has status ``cancelled``)::

        async with Runtime() as rt:
            result = await rt.run("return await add(1, 2)", bindings={"add": add})
    """

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        env: Mapping[str, str] | None = None,
        python: str | None = None,
        node: str | None = None,
    ) -> None:
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError("limits must be a tether.Limits")
        self.limits = limits or Limits()
        self._env = dict(env or {})
        self._interpreters = Interpreters(python=python or sys.executable, node=node)
        self._sessions: dict[Session, asyncio.Future[None]] = {}
        self._closed = False

    async def run(
        self,
        source: str,
        *,
        language: str = "python",
        bindings: BindingsArg = None,
        limits: Limits | None = None,
    ) -> RunResult:
        """Run ``source`` and return how it ended. Never raises for what the
        program did; raises ValueError/TypeError for bad arguments, and
        CancelledError if the calling task is cancelled (after cleaning up)."""
        if self._closed:
            raise RuntimeError("this Runtime is closed")
        if not isinstance(source, str):
            raise TypeError("source must be a str")
        if language not in LANGUAGES:
            raise ValueError(f"unsupported language {language!r}; tether runs: "
                             f"{', '.join(LANGUAGES)}")
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError("limits must be a tether.Limits")
        session = Session(source, language, prepare_bindings(bindings), limits or self.limits,
                          interpreters=self._interpreters, env=self._env)
        ended = asyncio.get_running_loop().create_future()
        self._sessions[session] = ended
        try:
            return await session.run()
        finally:
            del self._sessions[session]
            ended.set_result(None)

    async def aclose(self) -> None:
        """End every run still going (status ``cancelled``) and refuse new ones."""
        self._closed = True
        for session in self._sessions:
            session.cancel()
        await asyncio.gather(*self._sessions.values())

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
