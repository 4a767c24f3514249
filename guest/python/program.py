"""Compiling a program and reporting its errors (spec R-RUN-2, R-DONE-2).

The source runs as a module with top-level ``await`` allowed, so globals,
``global``, star imports and classes behave as in any script. A top-level
``return X`` is rewritten into raising :class:`ProgramReturn` (a
BaseException, so ``except Exception`` in the program does not swallow it);
line numbers are untouched.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import traceback
from types import CodeType
from typing import Any, Final

from tether.codec import ProgramError

FILENAME: Final = "<program>"
_RETURN: Final = "__tether_return__"


class ProgramReturn(BaseException):  # control flow, not an error
    """Raised by a top-level ``return``; carries the program's value."""

    def __init__(self, value: Any = None) -> None:
        super().__init__()
        self.value = value


class _TopLevelReturn(ast.NodeTransformer):
    """Rewrites ``return X`` outside any def/class into ``raise R(X)``."""

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return node

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node

    def visit_Return(self, node: ast.Return) -> ast.AST:
        call = ast.Call(
            func=ast.Name(id=_RETURN, ctx=ast.Load()),
            args=[node.value] if node.value is not None else [],
            keywords=[],
        )
        return ast.copy_location(ast.Raise(exc=call, cause=None), node)


def compile_program(source: str) -> CodeType:
    """Compile ``source``; raises SyntaxError with positions in ``source``."""
    linecache.cache[FILENAME] = (len(source), None, source.splitlines(True), FILENAME)
    tree = _TopLevelReturn().visit(ast.parse(source, FILENAME))
    ast.fix_missing_locations(tree)
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    code: CodeType = compile(tree, FILENAME, "exec", flags=flags, dont_inherit=True)
    if code.co_flags & inspect.CO_ASYNC_GENERATOR:
        raise SyntaxError("'yield' outside function", (FILENAME, 1, 0, "", 1, 0))
    return code


def program_globals(bindings: dict[str, Any]) -> dict[str, Any]:
    import builtins

    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    namespace.update(bindings)
    namespace[_RETURN] = ProgramReturn
    return namespace


def describe(exc: BaseException) -> ProgramError:
    """A DONE error: the traceback keeps only the program's own frames."""
    report = traceback.TracebackException.from_exception(exc)
    seen: set[int] = set()
    stack: list[traceback.TracebackException | None] = [report]
    while stack:
        te = stack.pop()
        if te is None or id(te) in seen:
            continue
        seen.add(id(te))
        te.stack = traceback.StackSummary.from_list(
            [frame for frame in te.stack if frame.filename == FILENAME]
        )
        stack += [te.__cause__, te.__context__]
    line = None
    if isinstance(exc, SyntaxError) and exc.filename == FILENAME:
        line = exc.lineno
    elif report.stack:
        line = report.stack[-1].lineno
    text = "".join(report.format())
    return ProgramError(
        type=type(exc).__name__,
        message=str(exc) if not isinstance(exc, SyntaxError) else (exc.msg or ""),
        traceback=text,
        line=line,
    )
