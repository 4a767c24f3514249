"""JavaScript programs end to end, through the Node guest: how errors are
named and placed, which names a program may declare, what it writes, and
which of its names come back as variables."""

from __future__ import annotations

from typing import Any

import pytest

from tether import Status

from .conftest import run

#: The ways a JavaScript program is compiled: plain, returning its last
#: expression, and with variables (its top-level names captured).
MODES: dict[str, dict[str, Any]] = {
    "plain": {},
    "last_expression": {"last_expression": True},
    "variables": {"variables": {}},
}


def _add(a: int, b: int) -> int:
    return a + b


def frames(traceback: str) -> list[str]:
    return [ln.strip() for ln in traceback.splitlines() if ln.strip().startswith("at ")]


@pytest.mark.parametrize(("source", "expected"), [
    ("class MyErr extends Error {}\nthrow new MyErr('m')", "MyErr"),
    ("class V extends TypeError {}\nthrow new V('m')", "V"),
    ("class A extends Error {}\nclass B extends A {}\nthrow new B('m')", "B"),
    ("class E extends Error { constructor(m) { super(m); this.name = 'Named' } }\n"
     "throw new E('m')", "Named"),
    ("class E extends Error {}\nE.prototype.name = 'OnPrototype'\nthrow new E('m')", "OnPrototype"),
    ("throw new (class extends Error {})('m')", "Error"),
    ("throw new TypeError('m')", "TypeError"),
    ("throw new DOMException('m', 'AbortError')", "AbortError"),
])
def test_an_error_is_named_by_its_class_or_the_name_the_program_gave_it(
        source: str, expected: str) -> None:
    result = run(source, language="javascript")
    assert result.status is Status.ERROR and result.error is not None
    assert result.error.type == expected
    assert result.error.message == "m"
    first = result.error.traceback.splitlines()[0]
    assert first == f"{expected}: m"


def test_an_error_subclass_traceback_shows_only_the_programs_frames() -> None:
    source = "class MyErr extends Error {}\nfunction f() {\n  throw new MyErr('m')\n}\nf()"
    result = run(source, language="javascript")
    assert result.error is not None
    assert result.error.traceback.splitlines()[0] == "MyErr: m"
    assert frames(result.error.traceback) == ["at f (<program>:3:9)", "at <program>:5:1"]
    assert result.error.line == 3


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("source", "expected"), [
    ("const add = (a, b) => a * b\nreturn add(2, 3)", 6),
    ("let require = 5\nreturn require", 5),
    ("const Cancelled = 'mine'\nreturn Cancelled", "mine"),
    ("class BindingError extends Error {}\nreturn new BindingError('x').name", "Error"),
    ("function add(a, b) { return a - b }\nreturn add(2, 3)", -1),
])
def test_a_program_may_declare_a_name_its_scope_already_has(
        source: str, expected: Any, mode: str) -> None:
    result = run(source, language="javascript", bindings={"add": _add}, **MODES[mode])
    assert result.status is Status.OK, result.error
    assert result.value == expected


@pytest.mark.parametrize("mode", MODES)
def test_errors_keep_their_lines_and_columns_in_every_mode(mode: str) -> None:
    for source, where in [("null.y", "1:6"), ("let a = 1\n  null.y\nlet b = 2", "2:8"),
                          ("let a = 1; null.y", "1:17")]:
        result = run(source, language="javascript", **MODES[mode])
        assert result.error is not None, source
        assert frames(result.error.traceback) == [f"at <program>:{where}"], (source, mode)


@pytest.mark.parametrize("mode", MODES)
def test_a_syntax_error_is_placed_on_its_line_in_every_mode(mode: str) -> None:
    result = run("let a = 1\nlet b = )\n", language="javascript", **MODES[mode])
    assert result.error is not None
    assert (result.error.type, result.error.line) == ("SyntaxError", 2)
    assert result.error.traceback.splitlines()[:2] == ["<program>:2", "let b = )"]


@pytest.mark.parametrize(("source", "last_line"), [
    ("let a = 1;\nlet b = 2;\nnull.y", "3:6"),
    ("let a = 1 // no semicolon, a comment\n\n/* between */ null.y;", "3:20"),
    ("null.y", "1:6"),
    ("'use strict'\nnull.y", "2:6"),
])
@pytest.mark.parametrize("variables", [None, {}])
def test_the_last_expression_keeps_its_columns(source: str, last_line: str,
                                               variables: dict[str, Any] | None) -> None:
    result = run(source, language="javascript", last_expression=True, variables=variables)
    assert result.error is not None
    assert frames(result.error.traceback) == [f"at <program>:{last_line}"]


def test_the_last_expression_after_a_statement_without_semicolon_is_returned() -> None:
    result = run("let a = 1\na + 1 // the result", language="javascript", last_expression=True)
    assert result.value == 2
    strict = "'use strict'\nfunction f() { return this }\nf() === undefined"
    assert run(strict, language="javascript", last_expression=True).value is True


def test_process_stdout_write_honours_its_encoding() -> None:
    source = ("process.stdout.write('68690a', 'hex')\n"
              "process.stderr.write('b2sK', 'base64')\n"
              "await new Promise((done) => process.stdout.write('caf\\xc3\\xa9\\n', 'latin1', done))\n"
              "process.stdout.write('plain\\n', 'utf8')\n"
              "process.stdout.write(Buffer.from('buf\\n'))")
    result = run(source, language="javascript")
    assert result.status is Status.OK, result.error
    assert result.output == "hi\nok\ncafé\nplain\nbuf\n"


def test_modules_the_program_loads_are_left_out_of_its_variables_silently() -> None:
    source = ("const fs = require('fs')\nconst path = require('node:path')\n"
              "const os = await import('node:os')\nconst { join } = path\n"
              "const kept = join('a', 'b')\nconst when = new Date(0)\n"
              "const resolved = require.resolve('node:fs')")
    result = run(source, language="javascript", variables={})
    assert result.status is Status.OK, result.error
    assert result.variables == {"kept": "a/b", "resolved": "node:fs"}
    assert set(result.dropped_variables) == {"when"}


def test_a_cyclic_variable_is_dropped_for_its_cycle_not_its_size() -> None:
    source = "const tree = {name: 'root', children: []}\ntree.children.push({parent: tree})\nconst n = 1"
    result = run(source, language="javascript", variables={})
    assert result.status is Status.OK, result.error
    assert result.variables == {"n": 1}
    assert result.dropped_variables == {"tree": "$.children[0].parent: cycle: the value contains itself"}


def test_bytes_of_a_character_split_across_writes_are_joined() -> None:
    """R-OUTPUT-4: an incomplete character waits for the next write to its
    stream, and is U+FFFD where a write to the other stream or the end comes first."""
    source = ("const out = process.stdout\n"
              "out.write(Buffer.from([0xe2, 0x82]))\nout.write(Buffer.from([0xac, 0x0a]))\n"
              "out.write(Buffer.from([0x61, 0xe2, 0x82]))\nprocess.stderr.write('b')\n"
              "out.write(Buffer.from([0xf0, 0x9f]))")
    result = run(source, language="javascript")
    assert result.status is Status.OK, result.error
    assert result.output == "€\na\ufffdb\ufffd"


@pytest.mark.parametrize(("source", "message"), [
    ("throw Object.create(null)", "uncaught object: [Object: null prototype] {}"),
    ("throw 'oops'", "uncaught string: oops"),
    ("throw {code: 1, why: 'no'}", "uncaught object: { code: 1, why: 'no' }"),
    ("throw [1, 2]", "uncaught object: [ 1, 2 ]"),
    ("throw 42", "uncaught number: 42"),
    ("throw null", "uncaught object: null"),
    ("throw Symbol('s')", "uncaught symbol: Symbol(s)"),
])
def test_a_thrown_value_that_is_not_an_error_is_described(source: str, message: str) -> None:
    """R-DONE-6: the value as Node shows it uncaught (util.inspect), not its String()."""
    result = run(source, language="javascript")
    assert result.error is not None
    assert (result.error.type, result.error.message) == ("Error", message)
