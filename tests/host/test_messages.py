"""What a program's author (a model) reads when something is wrong: the
message says what and where, in the program's terms."""

from __future__ import annotations

import pytest

from .conftest import pick, run

pytestmark = pytest.mark.memory_guest


def test_a_forgotten_await_is_named(lang: str) -> None:
    result = run(pick(lang, python="async def f():\n    return 1\nreturn f()",
                      javascript="async function f() { return 1 }\nreturn [f()]"),
                 language=lang)
    assert result.error is not None
    assert result.error.message.endswith("outside the value model; did you forget `await`?")


def test_a_map_key_of_the_wrong_type(lang: str) -> None:
    result = run(pick(lang, python="return {1: 2}", javascript="return new Map([[1, 2]])"),
                 language=lang)
    assert result.error is not None
    expected = pick(lang, python="map key 1 is an int, not a str",
                    javascript="map key 1 is a number, not a string")
    assert result.error.message.endswith(expected)


def test_an_uncaught_binding_error_shows_no_internal_path() -> None:
    async def fail() -> None:
        raise KeyError("nope")

    result = run("await fail()", bindings={"fail": fail})
    assert result.error is not None
    assert result.error.traceback.endswith("BindingError: KeyError: 'nope'\n")
    assert "tether." not in result.error.traceback


def test_a_javascript_syntax_error_shows_its_line() -> None:
    result = run("const a = 1\nlet x = ;\n", language="javascript")
    assert result.error is not None
    assert result.error.line == 2
    assert result.error.traceback.startswith("<program>:2\nlet x = ;\n        ^\nSyntaxError:")
    first = run("let x = ;", language="javascript")
    assert first.error is not None
    assert first.error.traceback.startswith("<program>:1\nlet x = ;\n")
