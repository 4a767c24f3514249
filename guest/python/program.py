"""Compiling a program and reporting its errors (spec R-RUN-2, R-DONE-2).

The source runs as a module with top-level ``await`` allowed, so globals,
``global``, star imports, ``dir()`` and classes behave as in any script. A
top-level ``return X`` is rewritten into raising :class:`ProgramReturn` (a
BaseException, so ``except Exception`` in the program does not swallow it);
line numbers are untouched.

A ``return`` inside a ``try`` or ``with`` cannot be an exception: a handler,
a context manager's exit or a TaskGroup would see it. Such a program is
compiled as what R-RUN-2 says it is, the body of a function (asynchronous
when it awaits at its top level), whose every top-level name is declared
``global``: it is still the module's, and the function's code is evaluated
with the module's namespace as its locals too, so top-level ``locals()``,
``dir()`` and ``exec()`` see it. What it defines is named as in a module
(``<lambda>``, not ``<module>.<locals>.<lambda>``).

A program that does not await at its top level runs as a script does; one
that does is a coroutine (:func:`awaits`), which the drivers run.
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import traceback
import warnings
from collections.abc import Collection, Iterator
from types import CodeType, ModuleType
from typing import Any, Final

from tether.codec import ProgramError

from .annotation_text import quote_unknown
from .statements import SCOPES, blocks, outline

FILENAME: Final = "<program>"
_RETURN: Final = "__tether_return__"
_IMPORT_STAR: Final = "__tether_import_star__"


class ProgramReturn(BaseException):  # control flow, not an error
    """Raised by a top-level ``return``; carries the program's value."""

    def __init__(self, value: Any = None) -> None:
        super().__init__()
        self.value = value


def _raise_return(node: ast.Return) -> ast.Raise:
    call = ast.Call(func=ast.Name(id=_RETURN, ctx=ast.Load()),
                    args=[node.value] if node.value is not None else [], keywords=[])
    raised = ast.Raise(exc=call, cause=None)
    for new in (call.func, call, raised):
        ast.copy_location(new, node)  # the return's own line, for tracebacks
    return raised


def _as_function_body(body: list[ast.stmt]) -> bool:
    """What a module allows and a function does not, in place: an annotated
    top-level name (it is to be declared global) is assigned, and its
    annotation stored in ``__annotations__`` as a module does; a star import
    becomes a call doing what the statement does. Returns whether there was
    an annotation to store."""
    annotated = False
    index = 0
    while index < len(body):
        node = body[index]
        if isinstance(node, ast.AnnAssign) and node.simple and isinstance(node.target, ast.Name):
            store = ast.Assign(
                targets=[ast.Subscript(value=ast.Name(id="__annotations__", ctx=ast.Load()),
                                       slice=ast.Constant(node.target.id), ctx=ast.Store())],
                value=node.annotation)
            replacement: list[ast.stmt] = [store] if node.value is None else [
                ast.Assign(targets=[node.target], value=node.value), store]
            body[index:index + 1] = [ast.fix_missing_locations(ast.copy_location(new, node))
                                     for new in replacement]
            index += len(replacement)
            annotated = True
            continue
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            call = ast.Call(func=ast.Name(id=_IMPORT_STAR, ctx=ast.Load()),
                            args=[ast.Constant(node.module or ""), ast.Constant(node.level)],
                            keywords=[])
            body[index] = ast.fix_missing_locations(ast.copy_location(ast.Expr(call), node))
        elif not isinstance(node, SCOPES):
            for block in blocks(node):
                annotated = _as_function_body(block) or annotated
        index += 1
    return annotated


def _import_star(namespace: dict[str, Any], name: str, level: int) -> None:
    """``from name import *`` into ``namespace``, as the statement does."""
    module = __import__(name, namespace, None, ("*",), level)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [key for key in module.__dict__ if not key.startswith("_")]
    for key in names:
        namespace[key] = getattr(module, key)


#: What makes a function asynchronous where it stands.
_ASYNC: Final = (ast.Await, ast.AsyncFor, ast.AsyncWith)
#: Nested scopes: what awaits in them is theirs.
_NESTED: Final = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _awaits_here(body: list[ast.stmt]) -> bool:
    """Whether ``body`` awaits in its own scope (not in a def or lambda of it)."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, _ASYNC) or (isinstance(node, ast.comprehension) and node.is_async):
            return True
        if not isinstance(node, _NESTED):
            stack.extend(ast.iter_child_nodes(node))
    return False


def awaits(code: CodeType) -> bool:
    """Whether the compiled program awaits at its top level: evaluating it
    gives a coroutine, which a driver runs."""
    return bool(code.co_flags & inspect.CO_COROUTINE)


def _compile_function(tree: ast.Module, flags: int) -> CodeType:
    """The program as a function (an ``async def`` if it awaits) whose
    top-level names are global; its code, which evaluated in the program's
    globals runs it (or gives its coroutine)."""
    body = tree.body
    docstring = ast.get_docstring(tree, clean=False)
    futures = int(docstring is not None)  # `from __future__` may only open a module
    while futures < len(body) and isinstance(node := body[futures], ast.ImportFrom) \
            and node.module == "__future__":
        futures += 1
    inner = body[futures:]  # not empty: it holds the return
    module_names: list[ast.stmt] = []  # what running the module would have set
    if docstring is not None:
        module_names.append(ast.Assign(targets=[ast.Name(id="__doc__", ctx=ast.Store())],
                                       value=ast.Constant(docstring)))
    if _as_function_body(inner):
        module_names.append(ast.Assign(targets=[ast.Name(id="__annotations__", ctx=ast.Store())],
                                       value=ast.Dict(keys=[], values=[])))
    inner[:0] = [ast.fix_missing_locations(ast.copy_location(node, inner[0]))
                 for node in module_names]
    kind = ast.AsyncFunctionDef if _awaits_here(inner) else ast.FunctionDef
    function = kind(
        name="<module>", args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                            kw_defaults=[], defaults=[]),
        body=inner, decorator_list=[], returns=None, type_comment=None)
    ast.copy_location(function, inner[0])
    function.end_lineno, function.end_col_offset = function.lineno, function.col_offset
    module = ast.Module(body=[*body[:futures], function], type_ignores=[])
    with warnings.catch_warnings():  # the second compile warns, once
        warnings.simplefilter("ignore")
        code = _function_code(compile(module, FILENAME, "exec", flags=flags, dont_inherit=True))
    # Compiled once more, with its own names (those bound at its top level,
    # a walrus in a comprehension's included) declared global.
    names = sorted({*code.co_varnames, *code.co_cellvars})
    if names:
        inner.insert(0, ast.copy_location(ast.Global(names=names), inner[0]))
        code = _function_code(compile(module, FILENAME, "exec", flags=flags, dont_inherit=True))
    return _as_in_a_module(code)


#: How the compiler names what a function defines: a module's is named without it.
_LOCALS: Final = "<module>.<locals>."


def _as_in_a_module(code: CodeType) -> CodeType:
    """``code`` with the code objects it defines (lambdas, generator
    expressions, comprehensions, and theirs) named as the module would
    name them."""
    consts = tuple(_as_in_a_module(const) if isinstance(const, CodeType) else const
                   for const in code.co_consts)
    qualname = code.co_qualname.removeprefix(_LOCALS)
    if qualname == code.co_qualname and all(
            new is old for new, old in zip(consts, code.co_consts, strict=True)):
        return code
    return code.replace(co_consts=consts, co_qualname=qualname)


def _function_code(module: CodeType) -> CodeType:
    return next(const for const in module.co_consts
                if isinstance(const, CodeType) and const.co_name == "<module>")


def compile_program(source: str, last_expression: bool = False,
                    known: Collection[str] = ()) -> CodeType:
    """Compile ``source``; raises SyntaxError with positions in ``source``.
    ``last_expression``: a last top-level expression statement is returned
    (R-VARS-7). ``known``: the names the program finds defined (bindings,
    variables, the guest's own)."""
    lines = source.splitlines(True)
    if lines and not lines[-1].endswith("\n"):
        # As linecache reads a file: tracebacks place their carets assuming
        # every line ends with one.
        lines[-1] += "\n"
    linecache.cache[FILENAME] = (len(source), None, lines, FILENAME)
    tree = ast.parse(source, FILENAME)
    if last_expression and tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        tree.body[-1] = ast.copy_location(ast.Return(value=last.value), last)
    shape = outline(tree.body)  # one walk of the statements, for what follows
    if shape.annotated:
        quote_unknown(tree, shape.statements, known)
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    code: CodeType
    try:
        if shape.return_under_handler:
            code = _compile_function(tree, flags)
        else:
            # A top-level `return X` becomes `raise ProgramReturn(X)`.
            for body, index, node in shape.returns:
                body[index] = _raise_return(node)
            code = compile(tree, FILENAME, "exec", flags=flags, dont_inherit=True)
    except SyntaxError as exc:
        # The body of a function that yields is a generator's: its returns,
        # not its yield, would be blamed.
        if exc.msg == "'return' with value in async generator" and _first_yield(tree):
            raise _yield_outside(tree) from None
        if exc.text is None and exc.lineno:  # compiled from the tree: the line it is on
            exc.text = linecache.getline(FILENAME, exc.lineno) or None
        raise
    if code.co_flags & (inspect.CO_ASYNC_GENERATOR | inspect.CO_GENERATOR):
        raise _yield_outside(tree)
    return code


def _first_yield(tree: ast.Module) -> ast.expr | None:
    """The program's own first ``yield`` (not one of a function in it)."""
    stack: list[ast.AST] = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Yield | ast.YieldFrom):
            return node
        if not isinstance(node, (*SCOPES, ast.Lambda)):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return None


def _yield_outside(tree: ast.Module) -> SyntaxError:
    node = _first_yield(tree)
    line, column = (node.lineno, node.col_offset + 1) if node is not None else (1, 1)
    return SyntaxError("'yield' outside function",
                       (FILENAME, line, column, linecache.getline(FILENAME, line), line, column))


def program_globals(own: dict[str, Any], bindings: dict[str, Any],
                    variables: dict[str, Any] | None = None) -> dict[str, Any]:
    """The program's globals: RUN's variables (R-VARS-2), over them the
    bindings (R-RUN-6). The guest's ``own`` names (``help``...) are built-ins,
    which both hide, as does what the program defines; its globals are a
    script's, and so is what ``dir()`` lists."""
    import builtins
    import sys

    # The program's module is __main__, as a script's is: what it defines can
    # be found by name (pickle, typing's forward references).
    main = ModuleType("__main__")
    sys.modules["__main__"] = main
    namespace: dict[str, Any] = main.__dict__
    namespace["__builtins__"] = builtins
    namespace["__annotations__"] = {}  # as the interpreter gives __main__
    namespace.update(variables or {})
    namespace.update(bindings)
    for name, value in {**own, _RETURN: ProgramReturn,
                        _IMPORT_STAR: functools.partial(_import_star, namespace)}.items():
        setattr(builtins, name, value)
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


def describe(exc: BaseException) -> ProgramError:
    """A DONE error: the traceback keeps only the program's own frames, and
    says each exception as the interpreter prints it at exit (R-DONE-2);
    ``message`` is the last line's text after the type."""
    report = traceback.TracebackException.from_exception(exc)
    seen: set[int] = set()
    stack: list[tuple[traceback.TracebackException | None, BaseException | None]] = [
        (report, exc)]
    message = shown(exc) if not isinstance(exc, SyntaxError) else (exc.msg or "")
    while stack:
        te, raised = stack.pop()
        if te is None or raised is None or id(te) in seen:
            continue
        seen.add(id(te))
        te.stack = traceback.StackSummary.from_list(
            [frame for frame in te.stack if frame.filename == FILENAME]
        )
        if isinstance(raised, _HINTED):
            text = _printed_alone(raised)
            if text is not None:
                _print_as(te, text, getattr(raised, "__notes__", None))
                if raised is exc and not isinstance(exc, SyntaxError):
                    message = text.rstrip("\n").partition(": ")[2] or message
        members = zip(te.exceptions or (), getattr(raised, "exceptions", ()), strict=False)
        stack += [(te.__cause__, raised.__cause__), (te.__context__, raised.__context__),
                  *members]  # a group's too
    line = None
    kind = type(exc).__name__
    if isinstance(exc, SyntaxError) and exc.filename == FILENAME:
        line = exc.lineno
        kind = "SyntaxError"  # its subclasses too (IndentationError): R-DONE-6
    elif report.stack:
        line = report.stack[-1].lineno
    return ProgramError(type=kind, message=message, traceback="".join(report.format()), line=line)


#: Exceptions the interpreter prints differently from the traceback module
#: (on 3.11: the hint "Did you mean: 'values'?", a SyntaxError's caret line),
#: or with a hint the message must carry (3.12: an ImportError's).
_HINTED: Final = (SyntaxError, NameError, AttributeError, ImportError)


def _printed_alone(exc: BaseException) -> str | None:
    """What the interpreter prints of ``exc`` itself at exit: its last line
    (type, message, hint), or a SyntaxError's lines; without its chain,
    its notes and its traceback (but the innermost frame, whose names a
    NameError's hint is found among). None if that cannot be had."""
    import io
    import sys
    import types

    tb = exc.__traceback__
    innermost = None
    if tb is not None and not isinstance(exc, SyntaxError):
        while tb.tb_next is not None:
            tb = tb.tb_next
        innermost = types.TracebackType(None, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    saved = (exc.__traceback__, exc.__cause__, exc.__context__, exc.__suppress_context__,
             exc.__dict__.pop("__notes__", None) if hasattr(exc, "__dict__") else None)
    stderr = sys.stderr
    printed = io.StringIO()
    try:
        exc.__traceback__, exc.__cause__, exc.__context__ = innermost, None, None
        sys.stderr = printed
        sys.__excepthook__(type(exc), exc, innermost)
    except Exception:  # the exception's own code failed: the module's text stands
        return None
    finally:
        sys.stderr = stderr
        exc.__traceback__, exc.__cause__, exc.__context__, exc.__suppress_context__ = saved[:4]
        if saved[4] is not None:
            exc.__notes__ = saved[4]
    lines = printed.getvalue().splitlines(keepends=True)
    if innermost is not None:  # the header, the frame and its lines go
        lines = lines[1:]
        while lines and lines[0].startswith(" "):
            del lines[0]
    return "".join(lines) or None


def _print_as(te: traceback.TracebackException, text: str, notes: Any) -> None:
    """``te`` says its exception as ``text``, then its notes."""
    def format_exception_only(**_: Any) -> Iterator[str]:
        yield text
        if isinstance(notes, list | tuple):
            for note in notes:
                yield from (line + "\n" for line in shown_note(note).split("\n"))
        elif notes is not None:
            yield shown_note(notes) + "\n"

    te.format_exception_only = format_exception_only  # type: ignore[method-assign,assignment]


def shown_note(note: Any) -> str:
    """A note as the interpreter prints it."""
    try:
        return note if isinstance(note, str) else str(note)
    except Exception:
        return "<note str() failed>"
