"""Host functions offered to the program."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tether.codec import Binding as WireBinding

from . import stubs_python, stubs_typescript
from .arguments import ArgumentCheck
from .description import Binding, Description, describe

BindingsArg = (Mapping[str, Callable[..., Any] | Binding]
               | Iterable[Callable[..., Any] | Binding] | None)


@dataclass(frozen=True, slots=True)
class HostBinding:
    """One binding, its name in the program, and how to describe it."""

    name: str  # the identifier the program calls it by
    function: Callable[..., Any]
    is_async: bool
    wire: WireBinding
    description: Description
    arguments: ArgumentCheck

    async def invoke(self, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Check the arguments (TypeError before the binding runs), then await
        an async binding, or run a sync one in a worker thread so the event
        loop never blocks (a sync binding cannot be interrupted: on a timeout
        or cancellation its thread finishes in the background)."""
        args, kwargs = self.arguments.check(args, kwargs)
        if self.is_async:
            result = await self.function(*args, **kwargs)
        else:
            result = await asyncio.to_thread(self.function, *args, **kwargs)
            if inspect.isawaitable(result):  # a sync function that returned a coroutine
                result = await result
        self.arguments.check_result(result)
        return result


def describe_bindings(bindings: BindingsArg) -> list[Description]:
    """Accepts ``{"name": callable or Binding}`` or an iterable of callables
    (named by ``__name__``) and :class:`Binding`s. Raises ValueError/TypeError
    for what cannot be described: that is a mistake in the host application,
    not in the program."""
    if bindings is None:
        return []
    if isinstance(bindings, Mapping):
        items: list[tuple[str | None, Any]] = list(bindings.items())
    else:
        items = [(None, b) for b in bindings]
    descriptions: list[Description] = []
    by_identifier: dict[str, str] = {}
    for name, binding in items:
        if name is not None and not isinstance(name, str):
            raise ValueError(f"binding name {name!r} is not a str")
        description = describe(binding, name)
        taken = by_identifier.get(description.identifier)
        if taken is not None:
            raise ValueError(f"binding {description.name!r} given twice" if taken ==
                             description.name else f"bindings {taken!r} and "
                             f"{description.name!r} both become {description.identifier!r}")
        by_identifier[description.identifier] = description.name
        descriptions.append(description)
    return descriptions


def prepare_bindings(bindings: BindingsArg, language: str = "python") -> dict[str, HostBinding]:
    """The bindings of a run in ``language``, by the identifier the program
    calls them by (see :func:`describe_bindings` for what is accepted)."""
    prepared: dict[str, HostBinding] = {}
    for description in describe_bindings(bindings):
        function = description.function
        stubs = stubs_python if language == "python" else stubs_typescript
        doc = (stubs_python.docstring(description) if language == "python"
               else stubs_typescript.jsdoc(description))
        prepared[description.identifier] = HostBinding(
            name=description.identifier,
            function=function,
            is_async=inspect.iscoroutinefunction(function)
            or inspect.iscoroutinefunction(type(function).__call__),
            wire=WireBinding(name=description.identifier, signature=stubs.signature(description),
                             doc=doc or None),
            description=description,
            arguments=ArgumentCheck(description),
        )
    return prepared
