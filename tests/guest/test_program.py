"""Compiling a program: a top-level ``return`` ends the program with its value
wherever it stands among statements; returns of functions stay theirs."""

from __future__ import annotations

import asyncio
import traceback
from typing import Any

import pytest

from tether.guest.python.program import (
    FILENAME,
    ProgramReturn,
    compile_program,
    program_globals,
)


def execute(source: str) -> Any:
    namespace = program_globals({}, {})
    try:
        awaitable = eval(compile_program(source), namespace)  # top-level await: a coroutine
        if awaitable is not None:
            asyncio.run(awaitable)
    except ProgramReturn as ret:
        return ret.value
    return "fell off the end"


@pytest.mark.parametrize(("source", "expected"), [
    ("return 1", 1),
    ("return", None),
    ("x = 2", "fell off the end"),
    ("if True:\n    return 2\nreturn 3", 2),
    ("if False:\n    pass\nelif True:\n    return 3", 3),
    ("for i in range(3):\n    if i == 1:\n        return i", 1),
    ("for i in range(3):\n    pass\nelse:\n    return 4", 4),
    ("while True:\n    return 5", 5),
    ("try:\n    raise ValueError\nexcept ValueError:\n    return 6\nfinally:\n    pass", 6),
    ("try:\n    pass\nexcept ValueError:\n    pass\nelse:\n    return 7", 7),
    ("try:\n    pass\nfinally:\n    return 8", 8),
    ("try:\n    raise ExceptionGroup('g', [ValueError()])\nexcept* ValueError:\n    x = 9\n"
     "return x", 9),
    ("with open('/dev/null') as f:\n    return 10", 10),
    ("match 11:\n    case 1:\n        return 0\n    case _:\n        return 11", 11),
    ("import asyncio, contextlib\n@contextlib.asynccontextmanager\nasync def cm():\n    yield\n"
     "async with cm():\n    await asyncio.sleep(0)\n    return 12", 12),
    ("async def g():\n    yield 1\nasync for v in g():\n    return 13", 13),
    ("def f():\n    return 1\nclass C:\n    def m(self):\n        return 2\n"
     "return [f(), C().m(), (lambda: 3)()]", [1, 2, 3]),
    ("try:\n    return 14\nexcept Exception:\n    return 0", 14),
])
def test_a_top_level_return_ends_the_program(source: str, expected: Any) -> None:
    assert execute(source) == expected


def test_a_return_keeps_its_line() -> None:
    with pytest.raises(ZeroDivisionError) as caught:
        execute("x = 1\n\nreturn 1 / 0")
    frames = [f for f in traceback.extract_tb(caught.value.__traceback__)
              if f.filename == FILENAME]
    assert [f.lineno for f in frames] == [3]


def test_yield_at_the_top_level_is_a_syntax_error() -> None:
    with pytest.raises(SyntaxError):
        compile_program("yield 1")
