"""Which of a program's annotations are kept as text.

The model reads the bindings' declarations, whose types (``Hit`` in
``list[Hit]``) exist only in that text: a program that annotates with them
would fail with NameError where CPython evaluates the annotation (a
top-level variable's, a function's). Such an annotation, and one naming a
class defined further on (a forward reference), becomes the string it reads
as, as if written in quotes. Every other annotation is evaluated as CPython
does, so a dataclass's fields and a TypedDict's required keys see real
types.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Collection


def quote_unknown(tree: ast.Module, statements: list[ast.stmt], known: Collection[str]) -> None:
    """Turn, in place, each annotation that names something not defined where
    it stands into its text: neither ``known`` (the run's bindings, variables
    and the guest's own names), nor a builtin, nor a name the program has
    bound by then (a class is bound at its end, so its own methods may name
    it, as a forward reference, and so may what stands before it). A
    program of ``from __future__ import annotations`` keeps all as text.
    ``statements``: every statement of ``tree``, nested ones included, in order."""
    if any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
           and any(alias.name == "annotations" for alias in node.names) for node in tree.body):
        return
    bound: dict[str, tuple[int, int]] = {}  # name -> where its first binding ends
    annotated: list[tuple[ast.AST, str]] = []  # (node, field holding an annotation)
    for node in statements:
        _collect(node, bound, annotated)
    for owner, name in annotated:
        annotation = getattr(owner, name)
        if isinstance(annotation, ast.Constant):
            continue  # already text
        at = (annotation.lineno, annotation.col_offset)

        def defined(name: str, at: tuple[int, int] = at) -> bool:
            return name in known or hasattr(builtins, name) or bound.get(name, at) < at

        if not all(defined(n.id) for n in ast.walk(annotation) if isinstance(n, ast.Name)):
            setattr(owner, name, ast.copy_location(ast.Constant(ast.unparse(annotation)),
                                                   annotation))


def _collect(node: ast.stmt, bound: dict[str, tuple[int, int]],
             annotated: list[tuple[ast.AST, str]]) -> None:
    """The names ``node`` binds (each where the statement ends) and the
    annotations it holds."""
    names: set[str] = set()
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        names.add(node.name)
        for parameter in getattr(node, "type_params", ()):  # def f[T]() (3.12)
            _bind(bound, getattr(parameter, "name", ""), (0, 0))
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        arguments = node.args
        for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                         arguments.vararg, arguments.kwarg):
            if argument is not None and argument.annotation is not None:
                annotated.append((argument, "annotation"))
        if node.returns is not None:
            annotated.append((node, "returns"))
    elif isinstance(node, ast.AnnAssign):
        annotated.append((node, "annotation"))
        _targets(node.target, names)
    elif isinstance(node, ast.Assign):
        for target in node.targets:
            _targets(target, names)
    elif isinstance(node, ast.AugAssign | ast.For | ast.AsyncFor):
        _targets(node.target, names)
    elif isinstance(node, ast.With | ast.AsyncWith):
        for item in node.items:
            if item.optional_vars is not None:
                _targets(item.optional_vars, names)
    elif isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
        names.update(_star_names(node.module, node.level))
    elif isinstance(node, ast.Import | ast.ImportFrom):
        names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    elif isinstance(node, ast.Try | ast.TryStar):
        names.update(handler.name for handler in node.handlers if handler.name)
    elif type(node).__name__ == "TypeAlias":  # `type X = ...` (3.12)
        _targets(node.name, names)  # type: ignore[attr-defined]
    end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
    for name in names:
        _bind(bound, name, end)


def _star_names(module: str | None, level: int) -> list[str]:
    """The names ``from module import *`` binds, where the guest has that
    module loaded already (``typing``, say); none otherwise: the program's
    import is not run before the program."""
    import sys

    loaded = sys.modules.get(module or "") if level == 0 else None
    if loaded is None:
        return []
    names = getattr(loaded, "__all__", None)
    if not isinstance(names, list | tuple):
        names = [name for name in vars(loaded) if not name.startswith("_")]
    return [name for name in names if isinstance(name, str)]


def _bind(bound: dict[str, tuple[int, int]], name: str, end: tuple[int, int]) -> None:
    if name and (name not in bound or end < bound[name]):
        bound[name] = end


def _targets(target: ast.expr, names: set[str]) -> None:
    if isinstance(target, ast.Name):
        names.add(target.id)
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            _targets(element, names)
    elif isinstance(target, ast.Starred):
        _targets(target.value, names)
