"""Programs written for frameworks whose tools are plain functions
(smolagents, CodeAct) call them without ``await``; tether's bindings are
async. The calls are awaited for the program, in place, so its line
numbers still hold."""

from __future__ import annotations

import ast
from collections.abc import Iterator

#: smolagents' tool that ends a step: awaited wherever it is called.
FINAL_ANSWER = "final_answer"

_Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef


def awaited(code: str, names: set[str]) -> str:
    """``code`` with calls of ``names`` wrapped in ``(await ...)``, in place,
    where ``await`` may stand. In code without ``await``, every call; in
    code that awaits, only those whose value is a whole statement or
    assignment (``x = f(1)``, ``f(1)``) and calls of ``final_answer``
    outside an ``await``: the code's other calls may be meant for
    ``asyncio.gather``. Code that does not parse is returned as it is, for
    the run to report.

    In code without ``await``, also: a generator expression holding an
    awaited call becomes a list comprehension (one that awaits would be an
    async generator, which ``sum`` or ``list`` cannot take), and a helper
    ``def`` that calls one of ``names`` becomes ``async def``, its calls
    awaited in turn, where that is safe: it is called only by name, from
    where ``await`` may stand, not decorated, not a generator, not a method.
    Calls in a ``lambda``, a class body or another ``def`` stay as they
    are."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    everywhere = not any(isinstance(node, ast.Await | ast.AsyncFor | ast.AsyncWith)
                         for node in ast.walk(tree))
    statements = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr | ast.Assign | ast.AugAssign | ast.AnnAssign)}
    helpers = _async_helpers(tree, names) if everywhere else {}
    called = names | set(helpers)
    async_scopes = {id(d) for d in helpers.values()}
    # (start, end, opening, closing) of each insertion pair.
    edits: list[tuple[tuple[int, int], tuple[int, int], bytes, bytes]] = []

    def can_await(scope: _Scope) -> bool:
        return (isinstance(scope, ast.Module | ast.AsyncFunctionDef)
                or id(scope) in async_scopes)

    def visit(node: ast.AST, scope: _Scope, in_await: bool,
              generators: list[ast.GeneratorExp]) -> None:
        if isinstance(node, ast.FunctionDef) and id(node) in async_scopes:
            edits.append((_start(node), _start(node), b"async ", b""))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in called and not in_await and can_await(scope)
                and (everywhere or id(node) in statements or node.func.id == FINAL_ANSWER)):
            edits.append((_start(node), _end(node), b"(await ", b")"))
            for generator in generators:  # each would be an async generator
                edits.append(_as_list(code, generator))
            generators = []
        if isinstance(node, ast.GeneratorExp):
            generators = [*generators, node]
        for child, child_scope in _children(node, scope):
            visit(child, child_scope, in_await or isinstance(node, ast.Await),
                  generators if child_scope is scope else [])

    visit(tree, tree, False, [])
    return _apply(code, edits)


def _children(node: ast.AST, scope: _Scope) -> Iterator[tuple[ast.AST, _Scope]]:
    """``node``'s children, each with the scope it runs in: a ``def``'s or
    class's body in it; its decorators, defaults and bases where it stands."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
        body = node.body if isinstance(node.body, list) else [node.body]
        for child in ast.iter_child_nodes(node):
            yield child, node if any(child is part for part in body) else scope
    else:
        for child in ast.iter_child_nodes(node):
            yield child, scope


def _walk(node: ast.AST, scope: _Scope) -> Iterator[tuple[ast.AST, _Scope]]:
    """Every node under ``node``, with the scope it runs in."""
    for child, child_scope in _children(node, scope):
        yield child, child_scope
        yield from _walk(child, child_scope)


def _async_helpers(tree: ast.Module, names: set[str]) -> dict[str, ast.FunctionDef]:
    """The ``def``\\ s to make ``async``, by name: those that call one of
    ``names`` or of each other, and may safely become async."""
    nodes = list(_walk(tree, tree))
    defined: dict[str, list[ast.AST]] = {}
    for node, _ in nodes:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.setdefault(node.name, []).append(node)
    calls: dict[str, list[_Scope]] = {}  # a def's name: the scopes it is called from
    uses: set[str] = set()  # names used otherwise: passed, bound, declared global...
    inside: dict[int, set[str]] = {}  # a scope: the names it calls
    functions = {id(node.func) for node, _ in nodes if isinstance(node, ast.Call)}
    for node, scope in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            calls.setdefault(node.func.id, []).append(scope)
            inside.setdefault(id(scope), set()).add(node.func.id)
        elif isinstance(node, ast.Name) and id(node) not in functions:
            uses.add(node.id)
        elif isinstance(node, ast.arg):
            uses.add(node.arg)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            uses.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            uses.update(node.names)
        elif isinstance(node, ast.alias):
            uses.add((node.asname or node.name).split(".")[0])
    candidates: dict[str, ast.FunctionDef] = {}
    for node, scope in nodes:
        if (isinstance(node, ast.FunctionDef) and not node.decorator_list
                and len(defined[node.name]) == 1 and node.name not in names
                and node.name not in uses and not isinstance(scope, ast.ClassDef)
                and not _generator(node)):
            candidates[node.name] = node
    while True:
        chosen: dict[str, ast.FunctionDef] = {}
        growing = True
        while growing:
            growing = False
            for name, node in candidates.items():
                if name not in chosen and inside.get(id(node), set()) & (names | set(chosen)):
                    chosen[name] = node
                    growing = True
        awaitable = {id(node) for node in chosen.values()}
        stuck = {name for name in chosen
                 for scope in calls.get(name, [])
                 if not (isinstance(scope, ast.Module | ast.AsyncFunctionDef)
                         or id(scope) in awaitable)}
        if not stuck:
            return chosen
        for name in stuck:
            del candidates[name]


def _generator(function: ast.FunctionDef) -> bool:
    return any(isinstance(node, ast.Yield | ast.YieldFrom) and scope is function
               for node, scope in _walk(function, function))


def _start(node: ast.expr | ast.stmt) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _end(node: ast.expr | ast.stmt) -> tuple[int, int]:
    assert node.end_lineno is not None and node.end_col_offset is not None
    return node.end_lineno, node.end_col_offset


def _as_list(code: str, generator: ast.GeneratorExp
             ) -> tuple[tuple[int, int], tuple[int, int], bytes, bytes]:
    """The brackets that make ``generator`` a list comprehension: inside
    its parentheses (its span has them, even where they are a call's)."""
    (line, column), (end_line, end_column) = _start(generator), _end(generator)
    lines = code.encode().splitlines(keepends=True)
    if (lines[line - 1][column:column + 1] == b"("
            and lines[end_line - 1][end_column - 1:end_column] == b")"):
        return (line, column + 1), (end_line, end_column - 1), b"[", b"]"
    return (line, column), (end_line, end_column), b"[", b"]"


def _apply(code: str, edits: list[tuple[tuple[int, int], tuple[int, int], bytes, bytes]]
           ) -> str:
    """``code`` with each pair of texts inserted at its start and end (byte
    columns, as ast gives them). Where several meet at one place, the
    closing texts of inner spans come first, then of outer ones, then the
    opening texts of outer spans, then of inner ones."""
    inserts: list[tuple[tuple[int, int], tuple[int, ...], bytes]] = []
    for start, end, opening, closing in set(edits):
        if opening:
            inserts.append((start, (1, -end[0], -end[1]), opening))
        if closing:
            inserts.append((end, (0, -start[0], -start[1]), closing))
    lines = code.encode().splitlines(keepends=True)  # as ast counts lines
    # From the last insertion to the first, so the offsets still to apply hold.
    for (line, column), _, text in sorted(inserts, reverse=True):
        raw = lines[line - 1]
        lines[line - 1] = raw[:column] + text + raw[column:]
    return b"".join(lines).decode()
