"""The pre-run check for Python programs: ty against the bindings' stubs.

ty (Astral's checker, the one pydantic's Monty uses) was chosen over mypy
and basedpyright: it answers a check in a fresh process faster than the
others do warm, so nothing needs to stay running (bench/README.md has the
figures). The program is first parsed as the guest compiles it: a syntax
error is then the only problem reported, as the guest would say it. Then it
is written, indented, as the body of an async function after ``from
__tether_bindings__ import *``; line and column are mapped back to the
program's own.
"""

from __future__ import annotations

import ast
import asyncio
import io
import json
import os
import re
import sys
import tempfile
import tokenize
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import stubs_python
from .description import Description
from .result import RunError
from .stubs_python import Keys

_PRELUDE = "from __tether_bindings__ import *\n"
_FUNCTION = "async def __tether_program__():\n"
_INDENT = "    "
_GUEST_NAMES = '''

class BindingError(Exception):
    """A binding call failed on the host."""
    binding: str
    type: str
    message: str
    code: int

def help(*request: object) -> None: ...
'''
_DIAGNOSTIC = re.compile(r"^(?:[^:\n]*):(\d+):(\d+): (error)\[([\w-]+)\] (.*)$", re.M)


def stubs(descriptions: Iterable[Description],
          variables: Sequence[str] = ()) -> tuple[str, dict[str, Keys]]:
    """The stubs the program is checked against: the bindings, the names
    the guest adds (BindingError, help) and the run's variables (of any
    type); and the keys of the TypedDicts they declare. ``__all__`` names
    them all: a star import leaves out names that begin with ``_`` (a
    binding may)."""
    descriptions = list(descriptions)
    text, typed_dicts = stubs_python.rendered(descriptions, one_dict=True)
    declared = "".join(f"{name}: __TetherAny\n" for name in variables)
    text += _GUEST_NAMES + ("from typing import Any as __TetherAny\n" + declared
                            if declared else "")
    names = [*(d.identifier for d in descriptions), *typed_dicts, "BindingError", "help",
             *variables]
    return text + f"__all__ = {names!r}\n", typed_dicts


def wrap(source: str, variables: Sequence[str] = ()) -> str:
    """The program as a function body; its variables are the module's
    globals there, as in the guest (one more line before the program)."""
    return "".join(text for text, _, _ in _layout(source, variables))


def _layout(source: str, variables: Sequence[str]) -> list[tuple[str, int, int]]:
    """The checked file's lines: (text, the program's line or 0, columns added).

    The program's opening ``from __future__`` lines go first and top-level
    ``from x import *`` lines right after the bindings' import (a function
    may hold neither), as in the guest, leaving a blank line in their place.
    The annotation of a top-level name that is a variable of the run (declared
    global here) is blanked: a global may not be annotated in a function, and
    it may be at the top of a module. Lines that continue a multi-line string
    keep their text: indenting them would change the string."""
    lines = source.splitlines(keepends=True)
    tree = _tree(source)
    futures, stars = _hoisted(tree, source, lines)
    in_string = _string_lines(source)
    blanked = _annotations_of(tree, set(variables))
    layout = [(lines[n - 1].strip() + "\n", n, 0) for n in futures]
    layout.append((_PRELUDE, 0, 0))
    layout += [(lines[n - 1].strip() + "\n", n, 0) for n in stars]
    layout.append((_FUNCTION, 0, 0))
    if variables:
        layout.append((f"{_INDENT}global {', '.join(variables)}\n", 0, 0))
    hoisted = {*futures, *stars}
    for n, text in enumerate(lines, 1):
        line = text
        if n in blanked:  # columns in UTF-8 bytes, as the parser gives them
            start, end = (len(text.encode()[:at].decode()) for at in blanked[n])
            line = text[:start] + " " * (end - start) + text[end:]
        if n in hoisted:
            layout.append((line[len(line.rstrip("\r\n")):] or "\n", n, 0))
        elif n in in_string or not line.strip():
            layout.append((line, n, 0))
        else:
            layout.append((_INDENT + line, n, len(_INDENT)))
    if lines and not lines[-1].endswith(("\n", "\r")):
        layout.append(("\n", 0, 0))
    layout.append((f"{_INDENT}pass\n", 0, 0))
    return layout


def _tree(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _hoisted(tree: ast.Module | None, source: str,
             lines: list[str]) -> tuple[list[int], list[int]]:
    """The lines that are an opening ``from __future__ import`` (after a
    docstring, if any), and those that are a top-level ``from x import *``,
    each alone on its line."""
    if tree is None:
        return [], []

    def alone(node: ast.stmt) -> bool:
        return node.end_lineno == node.lineno \
            and ast.get_source_segment(source, node) == lines[node.lineno - 1].strip()

    body = tree.body
    start = int(ast.get_docstring(tree, clean=False) is not None)
    futures: list[int] = []
    for node in body[start:]:
        if not (isinstance(node, ast.ImportFrom) and node.module == "__future__" and alone(node)):
            break
        futures.append(node.lineno)
    stars = [node.lineno for node in body
             if isinstance(node, ast.ImportFrom) and [a.name for a in node.names] == ["*"]
             and alone(node)]
    return futures, stars


def _annotations_of(tree: ast.Module | None, names: set[str]) -> dict[int, tuple[int, int]]:
    """For each top-level ``name: T = ...`` of one of ``names`` written on one
    line, its line and the columns of ``: T`` (the target's end to the
    annotation's end)."""
    if tree is None or not names:
        return {}
    found: dict[int, tuple[int, int]] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and node.simple and isinstance(node.target, ast.Name) \
                and node.target.id in names and node.annotation.end_lineno == node.lineno \
                and node.annotation.end_col_offset is not None \
                and node.target.end_col_offset is not None:
            found[node.lineno] = (node.target.end_col_offset, node.annotation.end_col_offset)
    return found


def _string_lines(source: str) -> set[int]:
    """The lines that begin inside a string (one written over several lines)."""
    inside: set[int] = set()
    starts: list[int] = []
    fstring_start = getattr(tokenize, "FSTRING_START", None)
    fstring_end = getattr(tokenize, "FSTRING_END", None)
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.STRING:
                inside.update(range(token.start[0] + 1, token.end[0] + 1))
            elif token.type == fstring_start:
                starts.append(token.start[0])
            elif token.type == fstring_end and starts:
                inside.update(range(starts.pop() + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        pass
    return inside


def syntax_error(source: str) -> RunError | None:
    """The program's syntax error as the guest compiles it (top-level
    ``await`` and ``return`` allowed), read by this interpreter."""
    try:
        ast.parse(source, "<program>")
    except SyntaxError as e:
        return _syntax_error(e.msg, e.lineno, e.offset, source)
    except ValueError as e:  # a NUL byte in the source
        return RunError(type="SyntaxError", message=str(e), line=1, column=1)
    return None


_PARSE = """\
import ast, json, sys
try:
    ast.parse(sys.stdin.read(), "<program>")
except SyntaxError as e:
    print(json.dumps([e.msg, e.lineno, e.offset]))
except ValueError as e:
    print(json.dumps([str(e), 1, 1]))
"""


async def _guest_syntax_error(python: str, source: str) -> RunError | None:
    """:func:`syntax_error` as the guests' interpreter reads the program (it
    may know syntax this one does not)."""
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        return syntax_error(source)
    process = await asyncio.create_subprocess_exec(
        python, "-I", "-S", "-c", _PARSE, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        out, _ = await process.communicate(source.encode())
    finally:
        if process.returncode is None:  # cancelled: the parser goes too
            process.kill()
            await process.wait()
    try:
        found = json.loads(out) if out.strip() else None
    except ValueError:
        return None
    if not isinstance(found, list) or len(found) != 3:
        return None
    return _syntax_error(str(found[0]), found[1], found[2], source)


def _syntax_error(message: str, line: Any, column: Any, source: str) -> RunError:
    """Typed SyntaxError whatever its subclass (IndentationError), as the
    guest reports a program it cannot compile (R-DONE-6)."""
    last = max(1, len(source.splitlines()))
    return RunError(type="SyntaxError", message=message,
                    line=min(line, last) if isinstance(line, int) and line > 0 else 1,
                    column=column if isinstance(column, int) and column > 0 else 1)


#: ty's complaint that a value is not the TypedDict a parameter declares
#: (the expected type, then the value's).
_NOT_TYPED_DICT = re.compile(r"Expected `(.+?)`, found `(.+)`$"
                             r"|declared type `(.+?)` on TypedDict `[^`]*`: value of type `(.+)`$")


def _admitted_at_run_time(message: str, typed_dicts: Mapping[str, Keys]) -> bool:
    """Whether ty refuses an argument of a type the guest passes and the
    argument check admits, where ty's view is stricter than JSON's. The
    types must match but in these places:

    - a plain dict where a TypedDict is declared: a dict held in a variable
      is ``dict[str, int]`` to ty, never a TypedDict (a dict written in the
      call is still checked key by key);
    - a TypedDict (a binding's result) where ``dict[str, Any]`` is declared,
      or where another TypedDict is whose required keys it has and whose
      keys are all it has (a model's result passed back as an argument);
    - ``int`` where ``float`` is declared inside a container (``list[int]``
      for ``list[float]``: lists are invariant to ty, numbers to JSON);
    - a ``str`` where a bare ``Literal`` of strings is declared (a variable:
      its value is not known here; a wrong literal written in the call is
      ``Literal["..."]`` to ty, and still refused);
    - ``list[T]`` where a tuple of T is declared (JSON has arrays only; the
      argument check counts the items);
    - ``T | None`` where ``T`` is (whether it is None, the run knows)."""
    m = _NOT_TYPED_DICT.search(message)
    if m is None:
        return False
    expected, found = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3),
                                                                               m.group(4))
    if found.endswith(" | None"):
        found = found.removesuffix(" | None")
    if _LITERALS.fullmatch(expected) and found == "str":
        return True
    tuple_items = re.fullmatch(r"tuple\[(.+)\]", expected)
    listed = re.fullmatch(r"list\[(.+)\]", found)
    if tuple_items and listed and "[" not in tuple_items.group(1):
        return all(_fits(listed.group(1), item, typed_dicts)
                   for item in tuple_items.group(1).split(", "))
    return _fits(found, expected, typed_dicts)


def _fits(found: str, expected: str, typed_dicts: Mapping[str, Keys]) -> bool:
    """``found`` and ``expected`` read alike, token by token, but where a
    difference is one the run admits."""
    given, declared = _TOKENS.findall(found), _TOKENS.findall(expected)
    if given == declared:
        return True
    i = j = 0
    while i < len(given) and j < len(declared):
        a, b = given[i], declared[j]
        if a == b or (a == "int" and b == "float"):
            i, j = i + 1, j + 1
            continue
        if a in typed_dicts and b in typed_dicts and _keys_fit(typed_dicts[a], typed_dicts[b]):
            i, j = i + 1, j + 1
            continue
        if a in typed_dicts and declared[j:j + 6] == ["dict", "[", "str", ",", "Any", "]"]:
            i, j = i + 1, j + 6
            continue
        if b in typed_dicts and a == "dict" and i + 1 < len(given) and given[i + 1] == "[":
            i = _closing(given, i + 1) + 1  # a plain dict of any value types
            j += 1
            continue
        return False
    return i == len(given) and j == len(declared)


def _keys_fit(given: Keys, declared: Keys) -> bool:
    return declared.required <= given.every <= declared.every


def _closing(tokens: list[str], opening: int) -> int:
    depth = 0
    for index in range(opening, len(tokens)):
        depth += {"[": 1, "]": -1}.get(tokens[index], 0)
        if depth == 0:
            return index
    return len(tokens)


#: A type's words and brackets, as ty writes it.
_TOKENS = re.compile(r'"[^"]*"|\w+|[\[\],|]')
#: A Literal of strings, as ty writes it.
_LITERALS = re.compile(r'Literal\[(?:"[^"]*"(?:, )?)+\]')


def _may_be_none(kind: str, message: str) -> bool:
    """Whether ty only says a value may be None where the program uses an
    attribute the value has otherwise (``re.match(...).group(1)``): whether
    it is, the run knows."""
    return kind == "missing-union-attribute" and "on `None` in union" in message


def parse(output: str, source: str, variables: Sequence[str] = (),
          typed_dicts: Mapping[str, Keys] | None = None) -> tuple[RunError, ...]:
    """ty's diagnostics, at the program's own lines and columns.
    ``typed_dicts``: the stubs' TypedDict names (see
    :func:`_admitted_at_run_time`)."""
    lines = source.splitlines() or [""]
    last = len(lines)
    layout = _layout(source, variables)
    names = typed_dicts or {}
    found = []
    for m in _DIAGNOSTIC.finditer(output):
        kind, message = m.group(4), m.group(5)
        if (kind == "invalid-argument-type" and _admitted_at_run_time(message, names)) \
                or _may_be_none(kind, message):
            continue
        index, column = int(m.group(1)) - 1, int(m.group(2))
        line, added = layout[index][1:] if 0 <= index < len(layout) else (0, 0)
        if line < 1:  # the wrapper's own lines: a program that cannot be read as a function body
            line, column = 1, 1
        else:
            column = max(1, column - added)
        if kind == "invalid-argument-type" and line <= last \
                and lines[line - 1][column - 1:].startswith("**") \
                and not lines[line - 1][column + 1:].lstrip().startswith("{"):
            # A dict unpacked into the call: ty checks the union of its values
            # against every parameter it may fill; the argument check, key by key.
            continue
        found.append(RunError(type=kind, message=message, line=min(line, last), column=column))
    return tuple(found)


async def check(ty: str, python: str, source: str, descriptions: Iterable[Description],
                timeout: float, *,
                variables: Sequence[str] = ()) -> tuple[RunError, ...] | None:
    """The program's type errors (empty: none); None when ty could not say
    (it failed or took longer than ``timeout``)."""
    try:
        async with asyncio.timeout(timeout):
            error = await _guest_syntax_error(python, source)
    except (TimeoutError, OSError):
        error = None
    if error is not None:  # ty would say it in its own words, worse (the program is wrapped)
        return (error,)
    with tempfile.TemporaryDirectory(prefix="tether-check-") as scratch:
        root = Path(scratch)
        text, typed_dicts = stubs(descriptions, variables)
        (root / "__tether_bindings__.pyi").write_text(text)
        (root / "program.py").write_text(wrap(source, variables))
        process = await asyncio.create_subprocess_exec(
            ty, "check", "--output-format", "concise", "--color", "never", "--no-progress",
            "--python", python, "program.py", cwd=scratch,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            async with asyncio.timeout(timeout):
                out, _ = await process.communicate()
        except TimeoutError:
            return None
        finally:
            if process.returncode is None:  # timed out or cancelled: ty goes too
                process.kill()
                await process.wait()
        if process.returncode not in (0, 1):  # 2: ty's own failure
            return None
        return parse(out.decode(errors="replace"), source, variables, typed_dicts)
