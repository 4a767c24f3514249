"""The text the model reads: golden files, and the rendered declarations
are themselves valid code (checked by the real checkers)."""

from __future__ import annotations

import ast
import enum
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from tether.demo import BINDINGS as DEMO
from tether.host import Limits, describe_bindings
from tether.host.bindings import prompt
from tether.host.sandbox.paths import GUEST_DIR

from .bindings_fixture import BINDINGS

GOLDEN = Path(__file__).parent / "golden"
#: TETHER_UPDATE_GOLDEN=1 rewrites the golden files (then review the diff).
UPDATE = os.environ.get("TETHER_UPDATE_GOLDEN") == "1"


def rendered() -> dict[str, str]:
    out = {}
    for name, bindings in (("fixture", BINDINGS), ("demo", DEMO)):
        descriptions = describe_bindings(bindings)
        out[f"{name}.pyi"] = prompt.declarations(descriptions, "python")
        out[f"{name}.d.ts"] = prompt.declarations(descriptions, "typescript")
    for language in ("python", "javascript", "typescript"):
        out[f"demo-{language}.txt"] = prompt.text(describe_bindings(DEMO), language, Limits())
    return out


@pytest.mark.parametrize("name", sorted(rendered()))
def test_the_text_matches_its_reviewed_golden_file(name: str) -> None:
    text = rendered()[name]
    if UPDATE:
        (GOLDEN / name).write_text(text)
    assert text == (GOLDEN / name).read_text(), f"TETHER_UPDATE_GOLDEN=1 rewrites {name}"


def ty_errors(stubs: str, tmp_path: Path) -> str:
    from ty import find_ty_bin

    (tmp_path / "stubs.pyi").write_text(stubs)
    done = subprocess.run([find_ty_bin(), "check", "--output-format", "concise", "--color",
                           "never", "--python", sys.executable, "stubs.pyi"],
                          cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout if done.returncode else ""


class Checker:
    """check.mjs run directly, outside a sandbox, speaking on fd 3."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        node = shutil.which("node")
        assert node is not None
        self.pid = os.posix_spawn(node, [node, str(GUEST_DIR / "node" / "check.mjs")],
                                  dict(os.environ), file_actions=[
                                      (os.POSIX_SPAWN_DUP2, theirs.fileno(), 3)])
        theirs.close()
        self.socket = ours
        self.stream = ours.makefile("rwb")
        assert json.loads(self.stream.readline())["ready"] is True

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        self.stream.write(json.dumps(request).encode() + b"\n")
        self.stream.flush()
        answer: dict[str, Any] = json.loads(self.stream.readline())
        return answer

    def close(self) -> None:
        self.stream.close()
        self.socket.close()
        os.waitpid(self.pid, 0)


@pytest.fixture(scope="module")
def checker() -> Iterator[Checker]:
    """One warm check.mjs for the module (the host tests' leak check must not see it)."""
    started = Checker()
    yield started
    started.close()


def typescript_errors(checker: Checker,
                      declarations: list[str]) -> list[list[dict[str, object]]]:
    """The problems check.mjs finds in each set of declarations."""
    answers = []
    for i, text in enumerate(declarations):
        answer = checker.ask({"id": i, "language": "typescript", "declarations": text,
                              "source": ""})
        assert answer["id"] == i, answer
        answers.append(answer["diagnostics"])
    return answers


def test_the_python_stubs_are_valid_python_and_type_check(tmp_path: Path) -> None:
    for name in ("fixture.pyi", "demo.pyi"):
        stubs = rendered()[name]
        ast.parse(stubs)
        assert ty_errors(stubs, tmp_path) == ""


def test_the_typescript_declarations_compile(checker: Checker) -> None:
    texts = rendered()
    assert typescript_errors(checker, [texts["fixture.d.ts"], texts["demo.d.ts"]]) == [[], []]


def test_a_renderer_fault_would_be_seen(checker: Checker) -> None:
    # the two checks above can fail
    assert typescript_errors(checker, ["declare function f(: number): void;"])[0]
    assert "error" in ty_errors_or_empty("async def f(x: Undefined) -> None: ...\n")


def ty_errors_or_empty(stubs: str) -> str:
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        return ty_errors(stubs, Path(scratch))


def test_summaries_list_names_and_first_lines() -> None:
    text = prompt.text(describe_bindings(BINDINGS), "python", Limits(), summary_only=True)
    assert "- search: Documents that mention ``query``.\n" in text
    assert "- get_weather: Current weather for a city.\n" in text
    assert "async def" not in text


def test_the_warm_checker_sees_each_checks_own_declarations(checker: Checker) -> None:
    answers = []
    for i, declarations in enumerate(["declare function f(x: number): Promise<number>;",
                                      "declare function g(): Promise<void>;",
                                      "declare function f(x: string): Promise<number>;"]):
        answer = checker.ask({"id": i, "language": "typescript", "declarations": declarations,
                              "source": "return await f(1)"})
        answers.append([d["code"] for d in answer["diagnostics"]])
    assert answers == [[], [2304], [2345]]  # fine; f unknown; f wants a string


def stubs_of(**functions: Any) -> str:
    return prompt.declarations(describe_bindings(functions), "python")


def declarations_of(**functions: Any) -> str:
    return prompt.declarations(describe_bindings(functions), "typescript")


def test_a_docstring_ending_in_a_quote_stays_valid_python(tmp_path: Path) -> None:
    async def quote(x: int) -> int:
        'Returns the "value"'
        return x

    stubs = stubs_of(quote=quote)
    function = ast.parse(stubs).body[-1]
    assert isinstance(function, ast.AsyncFunctionDef)
    assert ast.get_docstring(function) == 'Returns the "value"'
    assert ty_errors(stubs, tmp_path) == ""


class Ratio(enum.Enum):
    HALF = 0.5
    MORE = 1.5


def test_float_enumerations_render_as_float_with_their_values_in_the_text(
        tmp_path: Path, checker: Checker) -> None:
    async def scale(r: Ratio, by: Literal[2.5, 3] = 3) -> float:
        """Scale."""
        return float(r.value)

    stubs = stubs_of(scale=scale)
    assert "async def scale(r: float, by: float = 3) -> float:" in stubs, stubs
    assert "r: one of 0.5, 1.5" in stubs and "by: one of 2.5, 3" in stubs, stubs
    assert ty_errors(stubs, tmp_path) == ""
    assert typescript_errors(checker, [declarations_of(scale=scale)]) == [[]]


def test_a_positional_only_parameter_before_kwargs_keeps_its_slash(tmp_path: Path) -> None:
    async def tag(item: str, /, **labels: str) -> dict[str, str]:
        """Tag an item."""
        return {"item": item, **labels}

    async def spread(first: int, /, *rest: int) -> int:
        """Add."""
        return first

    stubs = stubs_of(tag=tag, spread=spread)
    assert "async def tag(item: str, /, **labels: str) -> dict[str, str]:" in stubs, stubs
    assert "async def spread(first: int, /, *rest: int) -> int:" in stubs, stubs
    assert ty_errors(stubs, tmp_path) == ""


def test_a_required_keyword_only_parameter_is_said_to_be_out_of_javascripts_reach() -> None:
    async def kwreq(*, name: str) -> str:
        """Keyword-only required."""
        return name

    async def optional(a: int, *, verbose: bool = False) -> int:
        """Optional keyword."""
        return a

    text = declarations_of(kwreq=kwreq, optional=optional)
    assert ("/**\n * Keyword-only required.\n *\n * Not callable from JavaScript: its required "
            "keyword-only parameter `name` cannot be passed from here.\n */\n"
            "declare function kwreq(): Promise<string>;") in text, text
    assert "/**\n * Optional keyword.\n */\ndeclare function optional(" in text, text


class Response(BaseModel):
    status: int


class Record(BaseModel):
    id: int


class Promise(BaseModel):
    when: str


class Exception(BaseModel):  # named like the builtin, on purpose
    code: int


def test_types_named_like_a_global_get_a_name_of_their_own(
        tmp_path: Path, checker: Checker) -> None:
    async def handle(r: Response, rec: Record, p: Promise, e: Exception) -> Record:
        """Handle."""
        return rec

    text = declarations_of(handle=handle)
    for name in ("Response", "Record", "Promise"):
        assert f"interface {name} " not in text and f"interface {name}_ {{" in text, text
    assert typescript_errors(checker, [text]) == [[]]
    stubs = stubs_of(handle=handle)
    assert "class Exception_(TypedDict):" in stubs and "class Exception(" not in stubs, stubs
    assert ty_errors(stubs, tmp_path) == ""
