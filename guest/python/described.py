"""What a binding shows the program: the host's docstring as ``__doc__`` and
its signature text as ``__signature__``, so ``help(search)`` and
``inspect.signature(search)`` read as the text the model was given.

The signature is parsed only when something asks for it: most programs
never do, and a run may carry many bindings.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

from tether.codec import Binding

_P = inspect.Parameter


class _Text(str):
    """An annotation or default shown as written (``list[Hit]``, not ``'list[Hit]'``)."""

    def __repr__(self) -> str:
        return str(self)


class TextSignature(inspect.Signature):
    """A signature given as text, parsed on first use."""

    __slots__ = ("_parsed", "_text")

    def __init__(self, text: str) -> None:  # Signature.__init__ runs at parse time
        self._text = text
        self._parsed: inspect.Signature | None = None

    def _signature(self) -> inspect.Signature:
        if self._parsed is None:
            self._parsed = _parse(self._text)
        return self._parsed

    @property
    def parameters(self) -> Any:
        return self._signature().parameters

    @property
    def return_annotation(self) -> Any:
        return self._signature().return_annotation


def describe(function: Any, binding: Binding) -> Any:
    function.__module__ = "bindings"  # help() names no module, not the shim
    if binding.doc is not None:
        function.__doc__ = binding.doc
    if binding.signature is not None:
        function.__signature__ = TextSignature(binding.signature)
    return function


def _parse(text: str) -> inspect.Signature:
    try:
        source = f"def _{text}: ..."
        node = ast.parse(source).body[0]
        assert isinstance(node, ast.FunctionDef)
    except (SyntaxError, AssertionError, ValueError):
        return inspect.Signature([_P("args", _P.VAR_POSITIONAL), _P("kwargs", _P.VAR_KEYWORD)])

    def text_of(expr: ast.expr | None) -> Any:
        if expr is None:
            return _P.empty
        return _Text(ast.get_source_segment(source, expr) or "...")

    a = node.args
    positional = [*a.posonlyargs, *a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    params = [
        _P(arg.arg, _P.POSITIONAL_ONLY if i < len(a.posonlyargs) else _P.POSITIONAL_OR_KEYWORD,
           default=text_of(default), annotation=text_of(arg.annotation))
        for i, (arg, default) in enumerate(zip(positional, defaults, strict=True))]
    if a.vararg is not None:
        params.append(_P(a.vararg.arg, _P.VAR_POSITIONAL, annotation=text_of(a.vararg.annotation)))
    params += [_P(arg.arg, _P.KEYWORD_ONLY, default=text_of(default),
                  annotation=text_of(arg.annotation))
               for arg, default in zip(a.kwonlyargs, a.kw_defaults, strict=True)]
    if a.kwarg is not None:
        params.append(_P(a.kwarg.arg, _P.VAR_KEYWORD, annotation=text_of(a.kwarg.annotation)))
    try:
        return inspect.Signature(params, return_annotation=text_of(node.returns))
    except ValueError:
        return inspect.Signature([_P("args", _P.VAR_POSITIONAL), _P("kwargs", _P.VAR_KEYWORD)])


def help(*request: Any) -> None:
    """``help(search)``: the binding's signature and docstring, as pydoc
    shows them; ``help()``: pydoc's welcome text."""
    import pydoc
    import sys

    # Without a request, pydoc's interactive help, which reads the program's
    # empty standard input and leaves, as in a script.
    pydoc.Helper(input=sys.stdin, output=sys.stdout)(*request)
