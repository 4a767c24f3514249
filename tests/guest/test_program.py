"""Compiling a program: a top-level ``return`` ends the program with its value
wherever it stands among statements; returns of functions stay theirs."""

from __future__ import annotations

import asyncio
import inspect
import sys
import traceback
import warnings
from typing import Any

import pytest

from tether.guest.python.program import (
    FILENAME,
    ProgramReturn,
    awaits,
    compile_program,
    program_globals,
)


def execute(source: str) -> Any:
    return run_in(source)[0]


def run_in(source: str, **variables: Any) -> tuple[Any, dict[str, Any]]:
    """The program's value ("fell off the end" for none) and its globals."""
    namespace = program_globals({}, {}, variables)
    code = compile_program(source)
    try:
        value = eval(code, namespace)  # a function's value, or a coroutine when it awaits
        if awaits(code):
            value = asyncio.run(value)
        if code.co_flags & inspect.CO_OPTIMIZED:  # compiled as a function
            return value, namespace
    except ProgramReturn as ret:
        return ret.value, namespace
    return "fell off the end", namespace


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
    ("try:\n    return 15\nexcept* BaseException:\n    pass\nreturn 0", 15),
    ("import contextlib\nwith contextlib.suppress(BaseException):\n    return 16\nreturn 0", 16),
    ("try:\n    pass\nfinally:\n    with open('/dev/null'):\n        if True:\n"
     "            return 17", 17),
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


def test_a_return_inside_with_is_no_exception_to_the_context_manager() -> None:
    """R-RUN-2: the program is the body of a function; a return leaves a
    ``with`` as a function's does, and a TaskGroup waits for its tasks."""
    source = """
import asyncio
seen = []
class Manager:
    def __enter__(self):
        return self
    def __exit__(self, kind, value, tb):
        seen.append(kind)
async def task():
    await asyncio.sleep(0)
    seen.append("task done")
with Manager():
    async with asyncio.TaskGroup() as group:
        group.create_task(task())
        return "returned"
"""
    value, namespace = run_in(source)
    assert value == "returned"
    assert namespace["seen"] == ["task done", None]


def test_a_program_compiled_as_a_function_keeps_its_names_global() -> None:
    source = """
from __future__ import annotations
import math as m
from string import *
count: int = 1
total: float
def bump():
    global count
    count += 1
class Box:
    size = count
[last := n for n in range(3)]
for i in range(2):
    bump()
try:
    raise ValueError("v")
except ValueError as e:
    caught = str(e)
del m
with open("/dev/null"):
    return [count, Box.size, last, i, caught, digits[:3], given]
"""
    value, namespace = run_in(source, given="from RUN")
    assert value == [3, 1, 2, 1, "v", "012", "from RUN"]
    names = {k for k in namespace if not k.startswith("__")}
    assert {"count", "bump", "Box", "last", "i", "caught", "digits", "given"} <= names
    assert "m" not in names and "e" not in names and "n" not in names
    assert namespace["count"] == 3


def test_a_program_compiled_as_a_function_keeps_its_lines_and_errors() -> None:
    with pytest.raises(ZeroDivisionError) as caught:
        execute("x = 1\nwith open('/dev/null'):\n    return x / 0")
    frames = [f for f in traceback.extract_tb(caught.value.__traceback__)
              if f.filename == FILENAME]
    assert [(f.lineno, f.name) for f in frames] == [(3, "<module>")]
    for source in ("try:\n    return 1\nfinally:\n    pass\nx = 1\nyield 2",
                   "x = 1\nyield 2\ntry:\n    return 3\nfinally:\n    pass",
                   "x = 1\nyield 2\nreturn 3"):
        with pytest.raises(SyntaxError) as error:
            compile_program(source)
        assert (error.value.msg, error.value.lineno) == ("'yield' outside function",
                                                         source.splitlines().index("yield 2") + 1)
    # As in an async function: return may not stand in an except* block.
    with pytest.raises(SyntaxError, match="except"):
        compile_program("try:\n    raise ExceptionGroup('g', [ValueError()])\n"
                        "except* ValueError:\n    return 'handled'")
    with pytest.raises(SyntaxError):
        compile_program("x = 1\nfrom __future__ import annotations\ntry:\n    return 1\n"
                        "finally:\n    pass")


def test_annotations_are_evaluated_as_cpython_does() -> None:
    """A dataclass's fields and a TypedDict's required keys see real types."""
    source = """
from dataclasses import dataclass, fields
from typing import NotRequired, TypedDict
@dataclass
class Row:
    sku: str
    qty: int
class Movie(TypedDict):
    title: str
    year: NotRequired[int]
def f(x: int) -> str:
    return str(x)
return [[f.type for f in fields(Row)], sorted(Movie.__required_keys__), f.__annotations__]
"""
    assert execute(source) == [[str, int], ["title"], {"x": int, "return": str}]


def test_annotations_naming_what_only_the_declarations_define_are_text() -> None:
    """``Hit`` exists only in the text the model reads: an annotation naming
    it is kept as that text; the others around it are evaluated."""
    source = """
from dataclasses import dataclass, fields
@dataclass
class Pick:
    hit: Hit
    rank: int
def best(hits: list[Hit], n: int = 1) -> Hit | None:
    return hits[0]
found: list[Hit] = [{"name": "a"}]
return [best(found), best.__annotations__, [f.type for f in fields(Pick)]]
"""
    assert execute(source) == [{"name": "a"},
                               {"hits": "list[Hit]", "n": int, "return": "Hit | None"},
                               ["Hit", int]]
    # A name the run defines (a binding, a variable) is evaluated.
    value, _ = run_in("def f(x: Hit) -> None:\n    pass\nreturn f.__annotations__['x']",
                      Hit=int)
    assert value == "Hit"  # compiled without knowing the variable: text
    namespace = program_globals({}, {}, {"Hit": int})
    code = compile_program("def f(x: Hit) -> None:\n    pass\nreturn f.__annotations__['x']",
                           known={"Hit"})
    with pytest.raises(ProgramReturn) as returned:
        eval(code, namespace)
    assert returned.value.value is int


def test_a_program_that_cannot_be_compiled_is_a_syntax_error() -> None:
    """R-DONE-6: IndentationError and TabError too are typed SyntaxError."""
    from tether.guest.python.program import describe

    with pytest.raises(SyntaxError) as caught:
        compile_program("x = 1\n  y = 2")
    error = describe(caught.value)
    assert (error.type, error.message, error.line) == ("SyntaxError", "unexpected indent", 2)


def test_a_warning_of_the_compile_is_given_once() -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        compile_program("x = 1\nif x is 1:\n    pass\ntry:\n    return x\nfinally:\n    pass")
    assert len(seen) == 1 and '"is" with' in str(seen[0].message)  # 3.12 names the type


def test_a_forward_reference_is_text_as_if_quoted() -> None:
    """A class named in annotations before it is defined (its own methods, a
    dataclass that holds itself) is kept as text, where CPython would fail."""
    source = """
from dataclasses import dataclass, field
@dataclass
class Node:
    name: str
    children: list[Node] = field(default_factory=list)
class Vec:
    def __init__(self, x: int) -> None:
        self.x = x
    def __add__(self, other: Vec) -> Vec:
        return Vec(self.x + other.x)
def make() -> Item:
    return Item()
class Item:
    pass
tree = Node("a", [Node("b")])
return [tree.children[0].name, (Vec(1) + Vec(2)).x, type(make()).__name__,
        Vec.__add__.__annotations__, Node.__annotations__["name"] is str]
"""
    assert execute(source) == ["b", 3, "Item", {"other": "Vec", "return": "Vec"}, True]


def test_a_program_of_postponed_annotations_keeps_its_own_text() -> None:
    source = ("from __future__ import annotations\ndef f(h: Hit) -> list[int]:\n    pass\n"
              "return f.__annotations__")
    assert execute(source) == {"h": "Hit", "return": "list[int]"}


@pytest.mark.skipif(sys.version_info < (3, 12), reason="type parameters are Python 3.12+")
def test_type_parameters_are_defined_in_annotations() -> None:
    source = ("def first[T](xs: list[T]) -> T:\n    return xs[0]\n"
              "return [first([1]), type(first.__annotations__['return']).__name__]")
    assert execute(source) == [1, "TypeVar"]


def test_a_program_compiled_as_a_function_sets_the_modules_names() -> None:
    """Its docstring and top-level annotations are the module's, as when it
    runs as a module."""
    source = ('"""Doc."""\ncount: int = 1\nlabel: str\nif True:\n    flag: bool = True\n'
              "try:\n    return [__doc__, __annotations__, count]\nfinally:\n    pass")
    assert execute(source) == ["Doc.", {"count": int, "label": str, "flag": bool}, 1]


@pytest.mark.parametrize(("source", "awaiting"), [
    ("x = 1", False),
    ("await f()", True),
    ("async with g():\n    pass", True),
    ("try:\n    return 1\nfinally:\n    pass", False),
    ("try:\n    return await f()\nfinally:\n    pass", True),
    ("try:\n    return [x async for x in g()]\nfinally:\n    pass", True),
    ("try:\n    async def h():\n        await f()\n    return 1\nfinally:\n    pass", False),
])
def test_a_program_awaits_only_where_it_awaits_at_its_top_level(source: str,
                                                                awaiting: bool) -> None:
    """R-RUN-8: a program that does not await at its top level (compiled as
    a module or as a function) runs as a script, not as a coroutine."""
    assert awaits(compile_program(source)) is awaiting


def test_what_a_program_compiled_as_a_function_defines_is_named_as_in_a_module() -> None:
    """R-RUN-2: lambdas, generator expressions and what they define are
    named as a module names them, not ``<module>.<locals>.<lambda>``."""
    source = ("try:\n    f = lambda: 0\n    g = (x for x in ())\n    h = lambda: (lambda: 1)\n"
              "    class C:\n        def m(self):\n            return lambda: 2\n"
              "    return [f.__qualname__, g.__qualname__, h().__qualname__,\n"
              "            C().m().__qualname__, C.m.__qualname__]\nfinally:\n    pass")
    assert execute(source) == ["<lambda>", "<genexpr>", "<lambda>.<locals>.<lambda>",
                               "C.m.<locals>.<lambda>", "C.m"]


def test_a_syntax_error_found_in_the_tree_carries_its_line() -> None:
    """R-DONE-2: errors found after parsing ('await' outside a function)
    show their line, as when the interpreter compiles the file."""
    with pytest.raises(SyntaxError) as raised:
        compile_program("import asyncio\n\ndef main():\n    await asyncio.sleep(1)\n")
    assert raised.value.text == "    await asyncio.sleep(1)\n"
    assert raised.value.lineno == 4
