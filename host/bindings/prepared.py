"""Host functions offered to the program."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from tether.codec import Binding as WireBinding

from . import prompt, stubs_python, stubs_typescript
from .arguments import ArgumentCheck
from .description import Description, describe
from .policy import Policy, policy_of

# Callables and Bindings (checked when described). Typed loosely on purpose:
# mypy infers a dict of unlike functions as dict[str, function], which no
# Callable type accepts, and that is how bindings are usually written.
BindingsArg = Mapping[str, Any] | Iterable[Any] | None


@dataclass(frozen=True, slots=True)
class HostBinding:
    """One binding, its name in the program, and how to describe it."""

    name: str  # the identifier the program calls it by
    function: Callable[..., Any]
    is_async: bool
    wire: WireBinding
    description: Description
    arguments: ArgumentCheck
    approval: Policy | None = None  # whether a call asks the approval hook first
    #: Extra positional arguments are left out (JavaScript's rule), not refused.
    extra_positional: bool = False

    async def invoke(self, args: list[Any], kwargs: dict[str, Any],
                     threads: Executor | None = None) -> Any:
        """Check the arguments (TypeError before the binding runs), then await
        an async binding, or run a sync one in one of ``threads`` (a session
        passes its Runtime's; None: the loop's default executor), with the
        caller's context variables as asyncio.to_thread does, so the event
        loop never blocks. A sync binding cannot be interrupted: on a timeout
        or cancellation its thread finishes in the background."""
        args, kwargs = self.arguments.check(args, kwargs,
                                            extra_positional=self.extra_positional)
        if self.is_async:
            result = await self.function(*args, **kwargs)
        else:
            context = contextvars.copy_context()
            call = functools.partial(context.run, self.function, *args, **kwargs)
            result = await asyncio.get_running_loop().run_in_executor(threads, call)
            if inspect.isawaitable(result):  # a sync function that returned a coroutine
                result = await result
        if self.description.plain is not None:  # a model, dataclass or enum, as declared
            result = self.description.plain(result)
        self.arguments.check_result(result)
        return result


# A binding is described, and its arguments' validator compiled, once per
# object and name: a Runtime runs the same bindings again and again. The
# cache holds the most recent ones only, so bindings made afresh for each
# run (closures) cost a description each time but are not kept forever.
CACHE_SIZE = 512
_CACHE: OrderedDict[tuple[int, str | None], _Cached] = OrderedDict()


@dataclass(slots=True)
class _Cached:
    binding: Any  # kept alive, so its id is not reused while cached
    description: Description
    prepared: dict[str, HostBinding]


def _cached(binding: Any, name: str | None) -> _Cached:
    key = (id(binding), name)
    entry = _CACHE.get(key)
    if entry is not None and entry.binding is binding:
        _CACHE.move_to_end(key)
        return entry
    entry = _CACHE[key] = _Cached(binding, describe(binding, name), {})
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return entry


def describe_bindings(bindings: BindingsArg) -> list[Description]:
    """Accepts ``{"name": callable or Binding}`` or an iterable of callables
    (named by ``__name__``) and :class:`Binding`s. Raises ValueError/TypeError
    for what cannot be described: that is a mistake in the host application,
    not in the program."""
    descriptions: list[Description] = []
    by_identifier: dict[str, str] = {}
    for name, binding in _items(bindings):
        description = _cached(binding, name).description
        taken = by_identifier.get(description.identifier)
        if taken is not None:
            raise ValueError(f"binding {description.name!r} given twice" if taken ==
                             description.name else f"bindings {taken!r} and "
                             f"{description.name!r} both become {description.identifier!r}")
        by_identifier[description.identifier] = description.name
        descriptions.append(description)
    return descriptions


def with_lookup(bindings: BindingsArg, language: str = "python") -> dict[str, Any]:
    """``bindings`` and ``describe_binding``, which returns one binding's
    declaration in ``language``: for programs shown only the names and
    summaries (``Runtime.describe(..., summary_only=True)``)."""
    descriptions = describe_bindings(bindings)
    out: dict[str, Any] = {description.name if name is None else name: binding
                           for (name, binding), description in zip(
                               _items(bindings), descriptions, strict=True)}
    out[prompt.LOOKUP] = prompt.lookup(descriptions, language)
    return out


def _items(bindings: BindingsArg) -> list[tuple[str | None, Any]]:
    if bindings is None:
        return []
    if isinstance(bindings, Mapping):
        items: list[tuple[str | None, Any]] = list(bindings.items())
    else:
        items = [(None, b) for b in bindings]
    for name, _ in items:
        if name is not None and not isinstance(name, str):
            raise ValueError(f"binding name {name!r} is not a str")
    return items


def prepare_bindings(bindings: BindingsArg, language: str = "python") -> dict[str, HostBinding]:
    """The bindings of a run in ``language``, by the identifier the program
    calls them by (see :func:`describe_bindings` for what is accepted)."""
    prepared: dict[str, HostBinding] = {}
    for name, binding in _items(bindings):
        entry = _cached(binding, name)
        host_binding = entry.prepared.get(language)
        if host_binding is None:
            known = next(iter(entry.prepared.values()), None)
            host_binding = entry.prepared[language] = _prepare(
                entry.description, language,
                known.arguments if known else ArgumentCheck(entry.description),
                policy_of(binding))
        prepared[host_binding.name] = host_binding
    if len(prepared) != len(_items(bindings)):
        describe_bindings(bindings)  # raises for the names that collide
    return prepared


def _prepare(description: Description, language: str, arguments: ArgumentCheck,
             approval: Policy | None) -> HostBinding:
    function = description.function
    stubs = stubs_python if language == "python" else stubs_typescript
    doc = (stubs_python.docstring(description) if language == "python"
           else stubs_typescript.jsdoc(description))
    return HostBinding(
        name=description.identifier,
        function=function,
        is_async=inspect.iscoroutinefunction(function)
        or inspect.iscoroutinefunction(type(function).__call__),
        wire=WireBinding(name=description.identifier, signature=stubs.signature(description),
                         doc=doc or None),
        description=description,
        arguments=arguments,
        approval=approval,
        extra_positional=language in ("javascript", "typescript"),
    )
