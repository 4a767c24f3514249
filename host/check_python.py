"""The pre-run check for Python programs: ty against the bindings' stubs.

ty (Astral's checker, the one pydantic's Monty uses) was chosen over mypy
and basedpyright: it answers a check in a fresh process faster than the
others do warm, so nothing needs to stay running (bench/README.md has the
figures). The program is written, indented, as the body of an async
function after ``from __tether_bindings__ import *``; line and column are
mapped back to the program's own.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from . import stubs_python
from .description import Description
from .result import RunError

_PRELUDE = "from __tether_bindings__ import *\nasync def __tether_program__():\n"
_LINES_BEFORE = _PRELUDE.count("\n")
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


def stubs(descriptions: Iterable[Description], variables: Sequence[str] = ()) -> str:
    """The stubs the program is checked against: the bindings, the names
    the guest adds (BindingError, help) and the run's variables (of any
    type)."""
    declared = "".join(f"{name}: __TetherAny\n" for name in variables)
    return (stubs_python.render(descriptions) + _GUEST_NAMES
            + ("from typing import Any as __TetherAny\n" + declared if declared else ""))


def wrap(source: str, variables: Sequence[str] = ()) -> str:
    """The program as a function body; its variables are the module's
    globals there, as in the guest (one more line before the program)."""
    body = "".join(_INDENT + line if line.strip() else line
                   for line in source.splitlines(keepends=True))
    names = f"{_INDENT}global {', '.join(variables)}\n" if variables else ""
    return (_PRELUDE + names + (body if body.strip() else _INDENT + "pass")
            + f"\n{_INDENT}pass\n")


def parse(output: str, source: str, variables: Sequence[str] = ()) -> tuple[RunError, ...]:
    last = max(1, len(source.splitlines()))
    before = _LINES_BEFORE + (1 if variables else 0)
    found = []
    for m in _DIAGNOSTIC.finditer(output):
        line, column = int(m.group(1)) - before, int(m.group(2))
        if line < 1:  # the prelude: a program that cannot be read as a function body
            line, column = 1, 1
        else:
            column = max(1, column - len(_INDENT))
        found.append(RunError(type=m.group(4), message=m.group(5), line=min(line, last),
                              column=column))
    return tuple(found)


async def check(ty: str, python: str, source: str, descriptions: Iterable[Description],
                timeout: float, *,
                variables: Sequence[str] = ()) -> tuple[RunError, ...] | None:
    """The program's type errors (empty: none); None when ty could not say
    (it failed or took longer than ``timeout``)."""
    with tempfile.TemporaryDirectory(prefix="tether-check-") as scratch:
        root = Path(scratch)
        (root / "__tether_bindings__.pyi").write_text(stubs(descriptions, variables))
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
        return parse(out.decode(errors="replace"), source, variables)
