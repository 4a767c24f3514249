"""Host functions offered to the program."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import keyword
import re
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from tether.codec import Binding as WireBinding

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: ``{"name": callable}`` or callables. The values are typed Any, not
#: Callable[..., Any]: mypy joins functions of different signatures into
#: ``builtins.function``, which is not Callable, so ``{"search": search,
#: "add": add}`` would not type-check; prepare_bindings checks callability.
BindingsArg = Mapping[str, Any] | Iterable[Any] | None


@dataclass(frozen=True, slots=True)
class HostBinding:
    """One callable, its name in the program, and how to describe it."""

    name: str
    function: Callable[..., Any]
    is_async: bool
    wire: WireBinding

    async def invoke(self, args: list[Any], kwargs: dict[str, Any], threads: Executor) -> Any:
        """Await an async binding; run a sync one in one of ``threads`` (with
        the caller's context variables, as asyncio.to_thread) so the event
        loop never blocks. A sync binding cannot be interrupted: on a timeout
        or cancellation its thread finishes in the background."""
        if self.is_async:
            return await self.function(*args, **kwargs)
        context = contextvars.copy_context()
        call = functools.partial(context.run, self.function, *args, **kwargs)
        result = await asyncio.get_running_loop().run_in_executor(threads, call)
        if inspect.isawaitable(result):  # a sync function that returned a coroutine
            return await result
        return result


def prepare_bindings(bindings: BindingsArg) -> dict[str, HostBinding]:
    """Accepts ``{"name": callable}`` or an iterable of callables (named by
    ``__name__``). Raises ValueError/TypeError for unusable names or values:
    that is a mistake in the host application, not in the program."""
    if bindings is None:
        return {}
    if isinstance(bindings, Mapping):
        items = list(bindings.items())
    else:
        items = []
        for function in bindings:
            name = getattr(function, "__name__", None)
            if not isinstance(name, str):
                raise TypeError(f"binding {function!r} has no __name__; pass a mapping")
            items.append((name, function))
    prepared: dict[str, HostBinding] = {}
    for name, function in items:
        if not isinstance(name, str) or not _NAME.fullmatch(name) or keyword.iskeyword(name):
            raise ValueError(f"binding name {name!r} is not a plain identifier")
        if not callable(function):
            raise TypeError(f"binding {name!r} is not callable")
        if name in prepared:
            raise ValueError(f"binding {name!r} given twice")
        prepared[name] = HostBinding(
            name=name,
            function=function,
            is_async=inspect.iscoroutinefunction(function)
            or inspect.iscoroutinefunction(type(function).__call__),
            wire=WireBinding(name=name, signature=_signature(function),
                             doc=inspect.getdoc(function) or None),
        )
    return prepared


def _signature(function: Callable[..., Any]) -> str | None:
    try:
        return str(inspect.signature(function))
    except (TypeError, ValueError):
        return None
