"""A program's statements, walked once without its expressions (a return,
an annotation, a binding statement is a statement; walking every node would
cost far more: figures in bench/README.md)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Final

#: Statements whose bodies are scopes of their own.
SCOPES: Final = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
#: Statements that would see a return raised through them.
HANDLERS: Final = (ast.Try, ast.TryStar, ast.With, ast.AsyncWith)


def blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists directly inside a compound statement (a def's and
    a class's body too)."""
    found = [getattr(node, name) for name in ("body", "orelse", "finalbody")
             if isinstance(getattr(node, name, None), list)]
    found += [handler.body for handler in getattr(node, "handlers", ())]  # try, try*
    found += [case.body for case in getattr(node, "cases", ())]  # match
    return found


@dataclass(slots=True)
class Outline:
    """What compiling a program needs to know of its statements."""

    #: Every statement, nested ones included, in the order of the source.
    statements: list[ast.stmt] = field(default_factory=list)
    #: The program's own ``return`` statements (not a def's): the statement
    #: list holding each, its index there, and the statement.
    returns: list[tuple[list[ast.stmt], int, ast.Return]] = field(default_factory=list)
    #: Whether one of those stands inside a ``try`` or ``with``.
    return_under_handler: bool = False
    #: Whether a statement holds an annotation (a def's, an annotated name's).
    annotated: bool = False


def outline(body: list[ast.stmt]) -> Outline:
    """One walk of ``body`` and every statement list nested in it."""
    found = Outline()
    _walk(body, found, in_scope=False, in_handler=False)
    return found


def _walk(body: list[ast.stmt], found: Outline, *, in_scope: bool, in_handler: bool) -> None:
    for index, node in enumerate(body):
        found.statements.append(node)
        if isinstance(node, ast.Return):
            if not in_scope:
                found.returns.append((body, index, node))
                found.return_under_handler = found.return_under_handler or in_handler
            continue
        if isinstance(node, ast.AnnAssign) or (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _annotated(node)):
            found.annotated = True
        nested_scope = in_scope or isinstance(node, SCOPES)
        nested_handler = in_handler or isinstance(node, HANDLERS)
        for block in blocks(node):
            _walk(block, found, in_scope=nested_scope, in_handler=nested_handler)


def _annotated(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    arguments = node.args
    return node.returns is not None or any(
        argument is not None and argument.annotation is not None
        for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                         arguments.vararg, arguments.kwarg))
