"""The type check of a Python program, in a sandbox of its own: the
program's text is untrusted input, so everything that reads it runs here,
confined like a guest (host/check/processes.py starts it), never in the host.

Started as::

    python -I -S -B .../guest/python/check.py --cwd DIR --ty TY [--path DIR]...
        [--packages DIR] [CONFINE]

by the guests' interpreter, so that a syntax error is the one the guest
would report. It confines itself (CONFINE: guest/python/confine.py's
options), says ``{"ready": true}`` on fd 3, reads one request line there,
``{"source": ..., "stubs": ..., "keyword_stubs": ..., "variables": [...],
"typed_dicts": {...}, "max_diagnostics": N, "max_message": N}``, and answers one line,
``{"diagnostics": [{"type", "message", "line", "column"}...]}`` (or
``{"error": ...}``), then exits.

The program is first parsed as the guest compiles it: a syntax error is
then the only problem reported, as the guest would say it. Then it is
written, indented, as the body of an async function after ``from
__tether_bindings__ import *``, and checked by ty against the stubs in an
environment of its own: the work directory, ty's own standard library and
``--packages`` (a site-packages directory) are all it can resolve, never
the host's site-packages. Line and column are mapped back to the
program's own.

Only the standard library is used: this runs with ``-I -S``.
"""

from __future__ import annotations

import ast
import io
import json
import os
import re
import socket
import subprocess
import sys
import tokenize
from collections.abc import Mapping, Sequence
from typing import Any

_PRELUDE = "from __tether_bindings__ import *\n"
_FUNCTION = "async def __tether_program__():\n"
_INDENT = "    "
_DIAGNOSTIC = re.compile(r"^(?:[^:\n]*):(\d+):(\d+): (error)\[([\w-]+)\] (.*)$", re.M)
#: What ty reads besides the program: the stubs, and a configuration that
#: makes the work directory the project (ty looks no further up for one).
_STUBS = "__tether_bindings__.pyi"
_PROGRAM = "program.py"
_CONFIG = "ty.toml"
#: The environment ty resolves third-party imports in (``--packages`` or nothing).
_ENVIRONMENT = "environment"


class Keys:
    """A TypedDict's keys, and those it requires."""

    __slots__ = ("every", "required")

    def __init__(self, every: frozenset[str], required: frozenset[str]) -> None:
        self.every = every
        self.required = required


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


def syntax_error(source: str) -> dict[str, Any] | None:
    """The program's syntax error as the guest compiles it (top-level
    ``await`` and ``return`` allowed), typed SyntaxError whatever its
    subclass (IndentationError), as the guest reports a program it cannot
    compile (R-DONE-6)."""
    try:
        ast.parse(source, "<program>")
    except SyntaxError as e:
        last = max(1, len(source.splitlines()))
        line, column = e.lineno, e.offset
        return _problem("SyntaxError", e.msg,
                        min(line, last) if isinstance(line, int) and line > 0 else 1,
                        column if isinstance(column, int) and column > 0 else 1)
    except ValueError as e:  # a NUL byte in the source
        return _problem("SyntaxError", str(e), 1, 1)
    return None


def _problem(kind: str, message: str, line: int, column: int) -> dict[str, Any]:
    return {"type": kind, "message": message, "line": line, "column": column}


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
          typed_dicts: Mapping[str, Keys] | None = None) -> list[dict[str, Any]]:
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
        found.append(_problem(kind, message, min(line, last), column))
    return found


def check(request: Mapping[str, Any], ty: str, packages: str | None) -> list[dict[str, Any]]:
    """The program's problems, in the work directory (the current one)."""
    source = request["source"]
    error = syntax_error(source)
    if error is not None:  # ty would say it in its own words, worse (the program is wrapped)
        return [error]
    variables = [str(name) for name in request.get("variables", ())]
    typed_dicts = {name: Keys(frozenset(keys["every"]), frozenset(keys["required"]))
                   for name, keys in request.get("typed_dicts", {}).items()}
    with open(_PROGRAM, "w", encoding="utf-8") as program:
        program.write(wrap(source, variables))
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    _environment(version, packages)
    found = parse(_ty(ty, version, request["stubs"]), source, variables, typed_dicts)
    keyword_stubs = request.get("keyword_stubs")
    calls = _keyword_calls(source, found) if isinstance(keyword_stubs, str) else {}
    if not calls or not isinstance(keyword_stubs, str):
        return found
    # A binding taking keywords is also declared taking them as one dict (an
    # overload); for a call by keywords ty then says only "no overload
    # matches". Checked against the keyword form alone, it says what is
    # wrong (an unexpected or a missing argument), as the run would.
    again = parse(_ty(ty, version, keyword_stubs), source, variables, typed_dicts)
    out: list[dict[str, Any]] = []
    for problem in found:
        span = calls.get((problem["line"], problem["column"]))
        said = [d for d in again if span is not None and span[0] <= d["line"] <= span[1]
                and d["type"] != "no-matching-overload"]
        out += said or [problem]
    return out


def _ty(ty: str, version: str, stubs: str) -> str:
    """ty's diagnostics of the program written out, against ``stubs``."""
    with open(_STUBS, "w", encoding="utf-8") as written:
        written.write(stubs)
    done = subprocess.run(
        [ty, "check", "--output-format", "concise", "--color", "never", "--no-progress",
         "--python", _ENVIRONMENT, "--python-version", version, "--python-platform", "linux",
         _PROGRAM],
        stdin=subprocess.DEVNULL, capture_output=True, check=False)
    if done.returncode not in (0, 1):  # 2: ty's own failure
        raise RuntimeError(f"ty exited with status {done.returncode}: "
                           f"{done.stderr.decode(errors='replace')[-1000:]}")
    return done.stdout.decode(errors="replace")


def _keyword_calls(source: str, found: list[dict[str, Any]]) -> dict[tuple[int, int],
                                                                      tuple[int, int]]:
    """For each "no overload matches" at a call that passes no argument by
    position, where it is (line, column) and the lines the call spans."""
    wanted = {(d["line"], d["column"]) for d in found if d["type"] == "no-matching-overload"}
    tree = _tree(source) if wanted else None
    if tree is None:
        return {}
    lines = source.splitlines()
    calls = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and not node.args and node.end_lineno is not None:
            text = lines[node.lineno - 1].encode()[:node.col_offset].decode(errors="replace")
            where = (node.lineno, len(text) + 1)  # ty counts characters, ast UTF-8 bytes
            if where in wanted:
                calls[where] = (node.lineno, node.end_lineno)
    return calls


def _environment(version: str, packages: str | None) -> None:
    """The configuration that makes the work directory ty's project, and a
    Python environment whose only site-packages is ``packages`` (or empty):
    ty would otherwise take the one it was installed in."""
    with open(_CONFIG, "w", encoding="utf-8"):
        pass
    site = os.path.join(_ENVIRONMENT, "lib", f"python{version}", "site-packages")
    os.makedirs(os.path.dirname(site))
    if packages:
        os.symlink(packages, site)
    else:
        os.mkdir(site)
    with open(os.path.join(_ENVIRONMENT, "pyvenv.cfg"), "w", encoding="utf-8") as config:
        config.write(f"home = {os.path.dirname(sys.executable)}\n"
                     f"include-system-site-packages = false\nversion = {version}\n")


def _answer(request: Mapping[str, Any], ty: str, packages: str | None) -> dict[str, Any]:
    try:
        found = check(request, ty, packages)
    except Exception as exc:  # the host says "not checked", with why
        return {"error": f"{type(exc).__name__}: {exc}"}
    limit = int(request.get("max_message", 2000))
    return {"diagnostics": [{**d, "message": d["message"][:limit]}
                            for d in found[:int(request.get("max_diagnostics", 20))]]}


def _values(args: list[str], flag: str) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == flag and i + 1 < len(args)]


def _main() -> None:
    args = sys.argv[1:]
    paths = _values(args, "--path")
    sys.path[:0] = paths
    try:
        from tether.guest.python import confine
    finally:
        del sys.path[: len(paths)]
    confinement = confine.parse(args)
    cwd = _values(args, "--cwd")[0]
    os.chdir(cwd)
    confine.apply(confinement, cwd)
    ty = _values(args, "--ty")[0]
    packages = next(iter(_values(args, "--packages")), None)
    with socket.socket(fileno=3) as channel, channel.makefile("rwb") as stream:
        stream.write(b'{"ready": true}\n')
        stream.flush()
        request = json.loads(stream.readline())
        stream.write(json.dumps(_answer(request, ty, packages)).encode() + b"\n")
        stream.flush()


if __name__ == "__main__":
    _main()
