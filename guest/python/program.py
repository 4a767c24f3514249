"""Compiling a program and reporting its errors (spec R-RUN-2, R-DONE-2).

The source runs as a module with top-level ``await`` allowed, so globals,
``global``, star imports and classes behave as in any script. A top-level
``return X`` is rewritten into raising :class:`ProgramReturn` (a
BaseException, so ``except Exception`` in the program does not swallow it);
line numbers are untouched.
"""

from __future__ import annotations
import __future__

import ast
import inspect
import linecache
import traceback
from types import CodeType, ModuleType
from typing import Any, Final

from tether.codec import ProgramError

FILENAME: Final = "<program>"
_RETURN: Final = "__tether_return__"


class ProgramReturn(BaseException):  # control flow, not an error
    """Raised by a top-level ``return``; carries the program's value."""

    def __init__(self, value: Any = None) -> None:
        super().__init__()
        self.value = value


def _rewrite_returns(body: list[ast.stmt]) -> None:
    """Top-level ``return X`` becomes ``raise R(X)``, in place. Only lists of
    statements are walked (a return is a statement; those inside a def or a
    class are the function's own): walking every node would cost far more
    (figures: bench/README.md)."""
    for index, node in enumerate(body):
        if isinstance(node, ast.Return):
            body[index] = _raise_return(node)
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if isinstance(node, ast.Try) and node.handlers:
                # A bare except (or BaseException) would catch the return.
                node.handlers.insert(0, _pass_return(node))
            for block in _blocks(node):
                _rewrite_returns(block)


def _blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists directly inside a compound statement."""
    blocks = [getattr(node, name) for name in ("body", "orelse", "finalbody")
              if isinstance(getattr(node, name, None), list)]
    blocks += [handler.body for handler in getattr(node, "handlers", ())]  # try, try*
    blocks += [case.body for case in getattr(node, "cases", ())]  # match
    return blocks


def _raise_return(node: ast.Return) -> ast.Raise:
    call = ast.Call(func=ast.Name(id=_RETURN, ctx=ast.Load()),
                    args=[node.value] if node.value is not None else [], keywords=[])
    raised = ast.Raise(exc=call, cause=None)
    for new in (call.func, call, raised):
        ast.copy_location(new, node)  # the return's own line, for tracebacks
    return raised


def _pass_return(node: ast.Try) -> ast.ExceptHandler:
    """``except R: raise``, for the head of a try's handlers."""
    name = ast.copy_location(ast.Name(id=_RETURN, ctx=ast.Load()), node)
    reraise = ast.copy_location(ast.Raise(exc=None, cause=None), node)
    return ast.copy_location(ast.ExceptHandler(type=name, name=None, body=[reraise]), node)


def compile_program(source: str, last_expression: bool = False) -> CodeType:
    """Compile ``source``; raises SyntaxError with positions in ``source``.
    ``last_expression``: a last top-level expression statement is returned
    (R-VARS-7)."""
    linecache.cache[FILENAME] = (len(source), None, source.splitlines(True), FILENAME)
    tree = ast.parse(source, FILENAME)
    if last_expression and tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        tree.body[-1] = ast.copy_location(ast.Return(value=last.value), last)
    _rewrite_returns(tree.body)
    # Annotations stay text: the type names of the bindings' declarations
    # (``list[Hit]``) are for reading, not defined in the guest.
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT | __future__.annotations.compiler_flag
    code: CodeType = compile(tree, FILENAME, "exec", flags=flags, dont_inherit=True)
    if code.co_flags & inspect.CO_ASYNC_GENERATOR:
        raise SyntaxError("'yield' outside function", (FILENAME, 1, 0, "", 1, 0))
    return code


def program_globals(own: dict[str, Any], bindings: dict[str, Any],
                    variables: dict[str, Any] | None = None) -> dict[str, Any]:
    """The program's globals: the guest's ``own`` names (``help``...), over
    them RUN's variables (R-VARS-2), over both the bindings (R-RUN-6)."""
    import builtins
    import sys

    # The program's module is __main__, as a script's is: what it defines can
    # be found by name (pickle, typing's forward references).
    main = ModuleType("__main__")
    sys.modules["__main__"] = main
    namespace: dict[str, Any] = main.__dict__
    namespace["__builtins__"] = builtins
    namespace.update(own)
    namespace.update(variables or {})
    namespace.update(bindings)
    namespace[_RETURN] = ProgramReturn
    return namespace


def top_level_names(namespace: dict[str, Any], excluded: set[str]) -> list[tuple[str, Any]]:
    """The program's top-level names that R-VARS-4 keeps, in the order they
    were first assigned: not private, not ``excluded`` (the bindings), not
    modules, functions or classes."""
    return [(name, value) for name, value in list(namespace.items())
            if not name.startswith("_") and name not in excluded
            and not isinstance(value, ModuleType | type) and not inspect.isroutine(value)]


def shown(exc: BaseException) -> str:
    """``str(exc)``, or a stand-in when the exception's own code fails."""
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__} object: str() failed>"


def _forget_returns(exc: BaseException) -> None:
    """An error raised in a ``finally`` after a top-level return did not
    happen while handling an exception, as in a function: the return's
    ProgramReturn is dropped from every context in the chain."""
    seen: set[int] = set()
    stack: list[BaseException | None] = [exc]
    while stack:
        current = stack.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current.__context__, ProgramReturn):
            current.__context__ = None
        stack += [current.__cause__, current.__context__,
                  *getattr(current, "exceptions", ())]


def describe(exc: BaseException) -> ProgramError:
    """A DONE error: the traceback keeps only the program's own frames."""
    _forget_returns(exc)
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
        stack += [te.__cause__, te.__context__, *(te.exceptions or ())]  # groups' too
    line = None
    if isinstance(exc, SyntaxError) and exc.filename == FILENAME:
        line = exc.lineno
    elif report.stack:
        line = report.stack[-1].lineno
    text = "".join(report.format())
    return ProgramError(
        type=type(exc).__name__,
        message=shown(exc) if not isinstance(exc, SyntaxError) else (exc.msg or ""),
        traceback=text,
        line=line,
    )
