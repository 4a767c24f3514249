"""A program's statements, walked without its expressions (a return, an
annotation, a binding statement is a statement; walking every node would
cost far more)."""

from __future__ import annotations

import ast
from collections.abc import Iterator


def blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists directly inside a compound statement (a def's and
    a class's body too)."""
    found = [getattr(node, name) for name in ("body", "orelse", "finalbody")
             if isinstance(getattr(node, name, None), list)]
    found += [handler.body for handler in getattr(node, "handlers", ())]  # try, try*
    found += [case.body for case in getattr(node, "cases", ())]  # match
    return found


def every_statement(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body``, nested ones included."""
    for node in body:
        yield node
        for block in blocks(node):
            yield from every_statement(block)
