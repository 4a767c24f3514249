"""Which of a program's annotations are kept as text.

The model reads the bindings' declarations, whose types (``Hit`` in
``list[Hit]``) exist only in that text: a program that annotates with them
would fail with NameError where CPython evaluates the annotation (a
top-level variable's, a function's). Such an annotation becomes the string
it reads as, a forward reference written in quotes. Every other annotation
is evaluated as CPython does, so a dataclass's fields and a TypedDict's
required keys see real types.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Collection, Iterator

#: Statement fields holding the statements of a block (def and class bodies too).
_BLOCKS = ("body", "orelse", "finalbody")


def quote_unknown(tree: ast.Module, known: Collection[str]) -> None:
    """Turn, in place, each annotation that names something neither the
    program binds anywhere, nor ``known`` (the run's bindings, variables and
    the guest's own names), nor a builtin, into its text."""
    bound: set[str] = set()
    annotated: list[tuple[ast.AST, str]] = []  # (node, field holding an annotation)
    for node in _statements(tree.body):
        _collect(node, bound, annotated)
    for owner, name in annotated:
        annotation = getattr(owner, name)
        if isinstance(annotation, ast.Constant):
            continue  # already text
        names = {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}
        if any(n not in bound and n not in known and not hasattr(builtins, n) for n in names):
            setattr(owner, name, ast.copy_location(ast.Constant(ast.unparse(annotation)),
                                                   annotation))


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement, nested ones included (expressions are not walked)."""
    for node in body:
        yield node
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if isinstance(block, list):
                yield from _statements(block)
        for handler in getattr(node, "handlers", ()):
            yield from _statements(handler.body)
        for case in getattr(node, "cases", ()):
            yield from _statements(case.body)


def _collect(node: ast.stmt, bound: set[str], annotated: list[tuple[ast.AST, str]]) -> None:
    """The names ``node`` binds and the annotations it holds."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        bound.add(node.name)
        arguments = node.args
        for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                         arguments.vararg, arguments.kwarg):
            if argument is not None and argument.annotation is not None:
                annotated.append((argument, "annotation"))
        if node.returns is not None:
            annotated.append((node, "returns"))
    elif isinstance(node, ast.ClassDef):
        bound.add(node.name)
    elif isinstance(node, ast.AnnAssign):
        annotated.append((node, "annotation"))
        _targets(node.target, bound)
    elif isinstance(node, ast.Assign):
        for target in node.targets:
            _targets(target, bound)
    elif isinstance(node, ast.AugAssign | ast.For | ast.AsyncFor):
        _targets(node.target, bound)
    elif isinstance(node, ast.With | ast.AsyncWith):
        for item in node.items:
            if item.optional_vars is not None:
                _targets(item.optional_vars, bound)
    elif isinstance(node, ast.Import | ast.ImportFrom):
        for alias in node.names:
            bound.add((alias.asname or alias.name).split(".")[0])
    elif isinstance(node, ast.Try | ast.TryStar):
        bound.update(handler.name for handler in node.handlers if handler.name)
    elif type(node).__name__ == "TypeAlias":  # `type X = ...` (3.12)
        _targets(node.name, bound)  # type: ignore[attr-defined]


def _targets(target: ast.expr, bound: set[str]) -> None:
    if isinstance(target, ast.Name):
        bound.add(target.id)
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            _targets(element, bound)
    elif isinstance(target, ast.Starred):
        _targets(target.value, bound)
