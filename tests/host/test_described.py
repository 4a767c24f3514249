"""Described bindings in real runs: the guest shows each binding's
description, the host checks every CALL's arguments before the binding runs,
and run(check=True) refuses a mistyped program before any guest starts."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import enum
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from tether import Binding, Runtime, Status
from tether.demo import BINDINGS as DEMO
from tether.host.result import CheckReport

from .conftest import _Shared, pick, run, runtime_for

pytestmark = pytest.mark.memory_guest


async def search(query: str, limit: int = 3) -> list[str]:
    """Documents that mention ``query``.

    Args:
        query: words to look for
    """
    CALLS.append((query, limit))
    return [query] * limit


CALLS: list[Any] = []
WEATHER = Binding("get-weather", "Weather for a city.",
                  {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]},
                  lambda **kwargs: CALLS.append(kwargs) or {"city": kwargs["city"]})
BINDINGS = {"search": search, "get-weather": WEATHER}


@pytest.fixture(autouse=True)
def _no_calls_yet() -> None:
    CALLS.clear()


def test_a_python_program_sees_each_binding_described() -> None:
    result = run("import inspect\n"
                 "print(search.__doc__)\n"
                 "print(inspect.signature(search))\n"
                 "help(get_weather)\n", bindings=BINDINGS)
    assert result.ok, result.error
    assert "Documents that mention ``query``.\n\nArgs:\n    query: words to look for" in result.stdout
    assert "(query: str, limit: int = 3) -> list[str]\n" in result.stdout
    assert "get_weather(*, city: str) -> Any\n    Weather for a city." in result.stdout
    assert "Help on function get_weather:\n" in result.stdout


def test_a_javascript_program_sees_each_binding_described() -> None:
    result = run("console.log(String(search)); console.log(get_weather.signature);",
                 language="javascript", bindings=BINDINGS)
    assert result.ok, result.error
    assert result.stdout == (
        "/**\n * Documents that mention ``query``.\n *\n * @param query words to look for\n */\n"
        "declare function search(query: string, limit?: number): Promise<string[]>;\n"
        "(input: {\n  city: string;\n}): Promise<any>\n")


@pytest.mark.parametrize("lang", ["python", "javascript"])
class Sky(enum.Enum):
    CLEAR = "clear"
    RAIN = "rain"


@dataclasses.dataclass
class Reading:
    sky: Sky
    raw: bytes


class Weather(BaseModel):
    city: str
    readings: list[Reading]


class User(BaseModel):
    user_id: int = Field(alias="userId")
    name: str = "ada"


def test_a_models_result_has_the_keys_its_declaration_shows() -> None:
    """The declaration the model reads names a field by its alias; the
    value the program gets has that key."""
    async def me() -> User:
        return User(userId=7)

    rt = runtime_for()
    assert "userId" in rt.describe({"me": me})
    result = run("return await me()", bindings={"me": me})
    assert result.status is Status.OK, result.error
    assert result.value == {"userId": 7, "name": "ada"}


def test_a_binding_may_return_what_its_hints_declare(lang: str) -> None:
    """As arguments are built into the declared models, dataclasses and
    enums, a result of those types reaches the program as plain values."""
    async def weather(city: str) -> Weather:
        return Weather(city=city, readings=[Reading(Sky.RAIN, b"\x00")])

    result = run("return await weather('Oslo')", language=lang,
                 bindings={"weather": weather})
    assert result.status is Status.OK, result.error
    assert result.value == {"city": "Oslo", "readings": [{"sky": "rain", "raw": b"\x00"}]}


def test_arguments_are_checked_before_the_binding_runs(lang: str) -> None:
    source = pick(lang, python="""
out = []
for call in (lambda: search(1), lambda: search("q", "2"), lambda: get_weather(city=3)):
    try:
        await call()
    except BindingError as e:
        out.append([e.type, e.message])
return [out, await search("q", 2)]
""", javascript="""
const out = [];
for (const call of [() => search(1), () => search("q", "2"), () => get_weather({city: 3})]) {
  try { await call(); } catch (e) { out.push([e.type, e.message]); }
}
return [out, await search("q", 2)];
""")
    result = run(source, language=lang, bindings=BINDINGS)
    assert result.ok, result.error
    assert result.value == [[
        ["TypeError", "search() argument 'query': 1 is not of type \"string\""],
        ["TypeError", "search() argument 'limit': \"2\" is not of type \"integer\""],
        ["TypeError", "get_weather() argument 'city': 3 is not of type \"string\""],
    ], ["q", "q"]]
    assert CALLS == [("q", 2)]  # the refused calls never reached a binding


@pytest.mark.parametrize(("lang", "source", "line", "column"), [
    ("python", "hits = await search('cbor')\nawait serch('x')\nreturn hits", 2, 7),
    ("python", "return await search('cbor', '3')", 1, 29),
    ("typescript", "const n: number = 'a';\nreturn n", 1, 7),
    ("typescript", "const hits = await search('q');\nreturn hits[0].lenght", 2, 16),
    ("javascript", "await search('q', 1, 2)", 1, 22),
    ("javascript", "\nawait serch('q')", 2, 7),
])
def test_a_mistyped_program_is_refused_before_it_runs(lang: str, source: str, line: int,
                                                      column: int) -> None:
    result = run(source, language=lang, bindings=BINDINGS, check=True)
    assert result.status is Status.INVALID, result
    assert result.error is not None and result.error.type == "TypeCheckError"
    first = result.diagnostics[0]
    assert (first.line, first.column) == (line, column), result.diagnostics
    assert (result.error.line, result.error.column) == (line, column)
    assert f"line {line}, column {column}: " in result.error.traceback
    assert CALLS == [] and result.stats.calls == 0 and result.chunks == ()


@pytest.mark.parametrize(("lang", "source"), [
    ("python", "import asyncio\nhits = await asyncio.gather(search('a'), search('b', 1))\n"
               "w = await get_weather(city='Oslo')\nreturn [len(hits), w['city']]"),
    ("typescript", "const hits: string[] = await search('a', 1);\n"
                   "const w = await get_weather({city: 'Oslo'});\nreturn [hits.length, w.city]"),
    ("javascript", "const hits = await search('a', 1);\n"
                   "const w = await get_weather({city: 'Oslo'});\nreturn [hits.length, w.city]"),
])
def test_a_correct_program_passes_its_check_and_runs(lang: str, source: str) -> None:
    result = run(source, language=lang, bindings=BINDINGS, check=True)
    assert result.ok, (result.error, result.diagnostics)
    assert result.value[1] == "Oslo"


def test_a_checked_program_sees_the_runs_variables() -> None:
    source = "n += 1\nhits = await search(q)\nreturn await serch(q * n)"
    result = run(source, bindings=BINDINGS, check=True, variables={"n": 1, "q": "a"})
    assert result.status is Status.INVALID
    # Only the misspelt name: n and q are defined, and the lines are the program's own.
    assert [(d.line, d.type) for d in result.diagnostics] == [(3, "unresolved-reference")]
    result = run(source.replace("serch", "search"), bindings=BINDINGS, check=True,
                 variables={"n": 1, "q": "a"})
    assert result.ok, result.diagnostics


@pytest.mark.parametrize("source", [
    "from __future__ import annotations\nhits: list[str] = await search(q)\nreturn len(hits)",
    '"""Find."""\nfrom __future__ import annotations\ntry:\n    return len(await search(q))\n'
    "finally:\n    pass",
    "q: str = q.strip()\nhits: list[str] = await search(q)\nreturn len(hits)",
    "q: str\nhits = await search(q)\nreturn len(hits)",
])
def test_what_a_module_allows_passes_the_check(source: str) -> None:
    """The program is checked as a function body: an opening ``from
    __future__`` import and an annotated run variable, both fine at the
    top of a module (the guest's), pass the check as they run."""
    result = run(source, bindings=BINDINGS, check=True, variables={"q": " a "})
    assert result.ok, (result.error, result.diagnostics)
    assert result.value == 3


def test_a_check_error_after_a_hoisted_line_keeps_its_line_and_column() -> None:
    source = "from __future__ import annotations\nq: str = q\nreturn await serch(q)"
    result = run(source, bindings=BINDINGS, check=True, variables={"q": "a"})
    assert [(d.line, d.column, d.type) for d in result.diagnostics] == [
        (3, 14, "unresolved-reference")], result.diagnostics


@pytest.mark.parametrize("lang", ["javascript", "typescript"])
def test_a_checked_javascript_program_sees_the_runs_variables(lang: str) -> None:
    """As parameters of any type around the program, as the guest has them:
    the program may declare its own of the same name."""
    variables = {"n": 1, "q": "a", "default": 2}  # a reserved word: no program can name it
    source = "n += 1\nconst hits = await search(q)\nreturn await serch(q + n)"
    result = run(source, language=lang, bindings=BINDINGS, check=True, variables=variables)
    assert result.status is Status.INVALID, result
    assert [d.line for d in result.diagnostics] == [3], result.diagnostics
    fixed = source.replace("serch", "search")
    result = run(fixed, language=lang, bindings=BINDINGS, check=True, variables=variables)
    assert result.ok and result.value == ["a2"] * 3, (result.error, result.diagnostics)
    result = run("let n = 'x'\nreturn n", language=lang, check=True, variables=variables)
    assert result.ok and result.value == "x", (result.error, result.diagnostics)
    # A name sloppy JavaScript allows and strict code reserves is in the
    # guest's scope but cannot be declared to the check: the run goes unchecked.
    result = run("return package + 1", language=lang, check=True, variables={"package": 1})
    assert result.ok and result.value == 2, (result.error, result.diagnostics)


def test_without_check_a_typescript_type_error_still_runs() -> None:
    assert run("const x: number = 'a' as any as number; return x", language="typescript").value == "a"
    assert run("const x: number = 'a';\nreturn x", language="typescript").value == "a"


@pytest.mark.parametrize("source", [
    "const out = [];\nfor (const h of await search('a')) out.push(h.length);\nreturn out",
    "let seen;\nseen = await search('a', 1);\nreturn seen.map((h) => h.length)",
    "const by = {};\nby['a'] = 1;\nfunction twice(x) { return x * 2 }\nreturn twice(by['a'])",
])
def test_typescript_infers_as_plain_typescript_does(source: str) -> None:
    """An empty array grows with its pushes (without noImplicitAny it would
    hold ``never``), and implicit ``any`` stays allowed."""
    result = run(source, language="typescript", bindings=BINDINGS, check=True)
    assert result.ok, (result.error, result.diagnostics)


class _Hit(TypedDict):
    title: str


async def find(query: str) -> list[_Hit]:
    return [{"title": query}]


async def save(record: dict[str, Any]) -> int:
    return len(record)


async def save_all(records: list[dict[str, Any]]) -> int:
    return len(records)


async def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


async def paint(color: Literal["red", "blue"]) -> str:
    return color


CHAINED = {"find": find, "save": save, "save_all": save_all, "mean": mean, "paint": paint}


@pytest.mark.parametrize("source", [
    "hits = await find('q')\nreturn await save(hits[0])",
    "hits = await find('q')\nreturn await save_all(hits)",
    "nums = [1, 2, 3]\nm = await mean(nums)\nreturn m",
    "for c in ['red', 'blue']:\n    last = await paint(c)\nreturn last",
])
def test_what_the_argument_check_admits_passes_the_python_check(source: str) -> None:
    """A binding's TypedDict result passed on as a dict, a list of ints for
    floats, a str variable for a Literal: JSON admits them, so does the check."""
    result = run(source, bindings=CHAINED, check=True)
    assert result.ok, (result.error, result.diagnostics)


async def send_email(to: str, subject: str, *, cc: list[str] | None = None,
                     html: bool = False) -> bool:
    return html


def test_a_dict_unpacked_into_a_call_passes_the_python_check() -> None:
    """ty checks the union of the dict's values against every parameter it
    may fill; the argument check takes it key by key."""
    source = ("msg = {'to': 'a@b', 'subject': 's', 'html': True}\n"
              "return await send_email(**msg)")
    result = run(source, bindings=[send_email], check=True)
    assert result.ok and result.value is True, (result.error, result.diagnostics)


def test_an_explicit_binding_taken_as_one_dict_passes_the_python_check() -> None:
    """Its arguments go as keywords or as one dict (docs/bindings.md): both
    forms are checked, the dict's keys too."""
    for source in ("w = await get_weather({'city': 'Oslo'})\nreturn w['city']",
                   "args = {'city': 'Oslo'}\nw = await get_weather(args)\nreturn w['city']",
                   "w = await get_weather(city='Oslo')\nreturn w['city']"):
        result = run(source, bindings=BINDINGS, check=True)
        assert result.ok and result.value == "Oslo", (result.error, result.diagnostics)
    result = run("return await get_weather({'town': 'Oslo'})", bindings=BINDINGS, check=True)
    assert result.status is Status.INVALID


def test_a_wrong_keyword_call_of_an_explicit_binding_says_what_is_wrong() -> None:
    """As the run's argument check would (an unexpected or a missing
    argument), not "no overload matches" of its two declared forms."""
    result = run("x = await get_weather(town='Oslo')\nreturn await get_weather()",
                 bindings=BINDINGS, check=True)
    assert [(d.type, d.line) for d in result.diagnostics] == [
        ("missing-argument", 1), ("unknown-argument", 1), ("missing-argument", 2)], result
    assert "`town`" in result.diagnostics[1].message
    assert "`city`" in result.diagnostics[2].message


@pytest.mark.parametrize("source", [
    "let last\nfor (const c of ['red', 'blue']) last = await paint(c)\nreturn last",
    "const hits = await find('q')\nreturn await save(hits.find((h) => h.title) ?? hits[0])",
    "const dir = process.env.HOME\nreturn await find(dir)",
])
def test_what_javascript_cannot_say_passes_its_check(source: str) -> None:
    """JavaScript has no ``!`` and no ``as const``: an inferred string for a
    union of strings, a value that may be undefined, pass; what would fail
    at run time is the argument check's to say."""
    result = run(source, language="javascript", bindings=CHAINED, check=True)
    assert result.status is not Status.INVALID, result.diagnostics


def test_what_javascript_makes_by_assigning_passes_its_check() -> None:
    """Sloppy code makes a global by assigning to it, and any object takes a
    property: names and properties only read are still refused."""
    source = ("count = 0\ncount = count + 1\nconst e = new Error('x')\ne.code = 'E'\n"
              "return [count, e.code]")
    result = run(source, language="javascript", check=True)
    assert result.ok and result.value == [1, "E"], (result.error, result.diagnostics)
    result = run("return totl + 1", language="javascript", check=True)
    assert [d.type for d in result.diagnostics] == ["TS2304"]


def test_a_wrong_value_written_in_a_javascript_call_is_refused() -> None:
    result = run("return await paint('green')", language="javascript", bindings=CHAINED,
                 check=True)
    assert [d.type for d in result.diagnostics] == ["TS2345"], result


async def point(xy: tuple[float, float]) -> float:
    return xy[0] + xy[1]


@pytest.mark.parametrize("source", [
    "return await point([1.0, 2.0])",
    "import re\nreturn re.match(r'(\\w+)', 'ab cd').group(1)",
    "import os\nreturn await find(os.environ.get('HOME'))",
])
def test_what_may_run_passes_the_python_check(source: str) -> None:
    """A list for a tuple (JSON has arrays only), and a value that may be
    None where it is used: whether it is, the run knows."""
    result = run(source, bindings={**CHAINED, "point": point}, check=True)
    assert result.status is not Status.INVALID, result.diagnostics


async def store(record: dict[str, Any]) -> int:
    return len(record)


async def move(to: tuple[int, int]) -> int:
    return to[0]


async def paint_all(colors: list[Literal["red", "blue"]]) -> int:
    return len(colors)


@pytest.mark.parametrize("source", [
    "hits = await find('q')\nreturn await store(hits)",  # a list of results for one dict
    "return await store('_Hit')",
    "return await move(['north', 'east'])",
    "return await paint_all(['green'])",
    "import os\nreturn os.environ.get('HOME') + 5",
    "return await mean(**{'xs': 'abc'})",
])
def test_what_fails_for_sure_is_still_refused_by_the_python_check(source: str) -> None:
    """The check admits what the run admits, type by type, no more."""
    bindings = {**CHAINED, "store": store, "move": move, "paint_all": paint_all}
    result = run(source, bindings=bindings, check=True)
    assert result.status is Status.INVALID, (result.error, result.diagnostics)


class _User(BaseModel):
    name: str
    tags: list[str] = Field(default_factory=list)


async def load_user(name: str) -> _User:
    return _User(name=name)


async def save_user(user: _User) -> str:
    return user.name


async def _private(x: int) -> int:
    return x


def test_a_result_passed_back_and_a_private_binding_pass_the_python_check() -> None:
    """A model's result (its defaulted fields present) passed back where the
    model is a parameter; a binding named with a leading underscore."""
    source = "u = await load_user('ann')\nreturn [await save_user(u), await _private(2)]"
    result = run(source, bindings={"load_user": load_user, "save_user": save_user,
                                   "_private": _private, "_overload": _private}, check=True)
    assert result.ok and result.value == ["ann", 2], (result.error, result.diagnostics)


@pytest.mark.parametrize("source", [
    "return await find(null)",
    "return await find(.5)",
    "for (const x of [1]) { total = total + x }\nreturn total",
    "console.log(count)\ncount = 1\nreturn count",
    "'use strict'\ncount = 0\nreturn count",
])
def test_what_fails_for_sure_is_still_refused_by_the_javascript_check(source: str) -> None:
    result = run(source, language="javascript", bindings=CHAINED, check=True)
    assert result.status is Status.INVALID, (result.error, result.diagnostics)


def test_a_wrong_literal_is_still_refused_by_the_python_check() -> None:
    result = run("return await paint('green')", bindings=CHAINED, check=True)
    assert [d.type for d in result.diagnostics] == ["invalid-argument-type"], result


def test_runtime_check_and_the_runtime_default() -> None:
    async def go() -> Any:
        async with Runtime(check=True) as rt:
            found = await rt.check("await add(1)", bindings=DEMO)
            clean = await rt.check("return await add(1, 2)", bindings=DEMO)
            refused = await rt.run("await add(1)", bindings=DEMO)
            ran = await rt.run("await add(1)", bindings=DEMO, check=False)
            # The names a run's variables will define, as run(check=True) knows them.
            given = await rt.check("return await add(a, 2)", bindings=DEMO, variables={"a": 1})
            return found, clean, refused, ran, given

    found, clean, refused, ran, given = asyncio.run(go())
    assert [(d.line, d.type) for d in found] == [(1, "missing-argument")]
    assert clean == given == ()
    assert found.checked and clean.checked and given.checked
    assert refused.status is Status.INVALID and refused.check == CheckReport(checked=True)
    assert ran.status is Status.ERROR and ran.error.type == "BindingError"



@pytest.mark.parametrize("lang", ["python", "javascript"])
def test_a_program_shown_only_summaries_reads_a_declaration_on_demand(lang: str) -> None:
    from tether.host import with_lookup

    assert _Shared.runtime is not None
    text = _Shared.runtime.describe(BINDINGS, language=lang, summary_only=True)
    assert "- search: Documents that mention ``query``.\n" in text
    assert "describe_binding(\"search\")" in text and "def search" not in text
    result = run("return await describe_binding('search')", language=lang,
                 bindings=with_lookup(BINDINGS, lang))
    assert result.ok, result.error
    assert ("async def search(query: str, limit: int = 3) -> list[str]:" if lang == "python"
            else "declare function search(query: string, limit?: number)") in result.value


FEATURES = [  # (a call the schema admits, one it refuses, the parameter named), per language
    ("paint({'corner': {'x': 1, 'y': 2}}, 'rain')", "paint({corner: {x: 1, y: 2}}, 'rain')",
     "paint({'corner': {'x': '1', 'y': 2}}, 'rain')", "paint({corner: {x: '1', y: 2}}, 'rain')",
     "box.corner.x"),
    ("paint({'corner': {'x': 1, 'y': 2}, 'label': None}, 'clear', 'stroke')",
     "paint({corner: {x: 1, y: 2}, label: null}, 'clear', 'stroke')",
     "paint({'corner': {'x': 1, 'y': 2}}, 'snow')", "paint({corner: {x: 1, y: 2}}, 'snow')",
     "sky"),
    ("paint({'corner': {'x': 1, 'y': 2}}, 'rain', 'fill', b'\\x00')",
     "paint({corner: {x: 1, y: 2}}, 'rain', 'fill', new Uint8Array([0]))",
     "paint({'corner': {'x': 1, 'y': 2}}, 'rain', 'fill', 'text')",
     "paint({corner: {x: 1, y: 2}}, 'rain', 'fill', 'text')", "data"),
    ("paint({'corner': {'x': 1, 'y': 2}}, 'rain', 'fill', None, {'a': 1.5, 'b': 2})",
     "paint({corner: {x: 1, y: 2}}, 'rain', 'fill', null, {a: 1.5, b: 2})",
     "paint({'corner': {'x': 1, 'y': 2}}, 'rain', 'lines')",
     "paint({corner: {x: 1, y: 2}}, 'rain', 'lines')", "mode"),
    ("total(1, 2.5, 3)", "total(1, 2.5, 3)", "total(1, '2')", "total(1, '2')", "values[1]"),
    ("search('q', 2)", "search('q', 2)", "search('q', 2.5)", "search('q', 2.5)", "limit"),
    ("get_weather(city='Oslo', days=7)", "get_weather({city: 'Oslo', days: 7})",
     "get_weather(city='Oslo', days=8)", "get_weather({city: 'Oslo', days: 8})", "days"),
]


@pytest.mark.parametrize("lang", ["python", "javascript"])
@pytest.mark.parametrize("feature", FEATURES, ids=[f[4] for f in FEATURES])
def test_every_schema_feature_is_checked_in_both_guests(lang: str,
                                                        feature: tuple[str, ...]) -> None:
    from ..describe.bindings_fixture import BINDINGS as FIXTURE

    good, bad = (feature[0], feature[2]) if lang == "python" else (feature[1], feature[3])
    source = pick(lang, python=f"""
await {good}
try:
    await {bad}
except BindingError as e:
    return [e.type, e.message]
""", javascript=f"""
await {good};
try {{ await {bad}; }} catch (e) {{ return [e.type, e.message]; }}
""")
    result = run(source, language=lang, bindings=FIXTURE)
    assert result.ok, result.error
    assert result.value[0] == "TypeError"
    assert f"argument '{feature[4]}'" in result.value[1], result.value


class Corner(BaseModel):
    x: int
    y: int


async def dist(p: Corner) -> float:
    """Distance from the origin."""
    return float((p.x ** 2 + p.y ** 2) ** 0.5)


async def spread(points: list[Corner]) -> int:
    """How many points."""
    return len(points)


def test_a_dict_held_in_a_variable_passes_the_check_where_a_model_is_expected() -> None:
    source = ("p = {'x': 3, 'y': 4}\npts = [{'x': i, 'y': i} for i in range(2)]\n"
              "return [await dist(p), [await dist(q) for q in pts], await spread(pts)]")
    result = run(source, bindings={"dist": dist, "spread": spread}, check=True)
    assert result.ok and result.value == [5.0, [0.0, 2 ** 0.5], 2], (result.error,
                                                                      result.diagnostics)
    # A dict written in the call is still checked key by key.
    result = run("return await dist({'x': '3', 'y': 4})", bindings={"dist": dist}, check=True)
    assert result.status is Status.INVALID, result
    assert '"x"' in result.diagnostics[0].message, result.diagnostics


def test_a_star_import_passes_the_check_as_it_runs() -> None:
    result = run("from math import *\n\nreturn [sqrt(4), await search('q', floor(1.5))]",
                 bindings=BINDINGS, check=True)
    assert result.ok and result.value == [2.0, ["q"]], (result.error, result.diagnostics)
    result = run("from math import *\nreturn serch(sqrt(4))", bindings=BINDINGS, check=True)
    assert [(d.line, d.type) for d in result.diagnostics] == [(2, "unresolved-reference")]


@pytest.mark.parametrize(("lang", "source", "line"), [
    ("javascript", "const x: number = await search('q', 1);\nreturn x", 1),
    ("javascript", "function id<T>(x: T): T { return x; }\nreturn id(1)", 1),
    ("typescript", "const a = 1;\nenum Color { Red, Green }\nreturn Color.Green", 2),
    ("typescript", "namespace N { export const a = 1; }\nreturn N.a", 1),
    ("typescript", "class P { constructor(public x: number) {} }\nreturn new P(1).x", 1),
])
def test_syntax_the_guest_cannot_run_is_refused_by_the_check(lang: str, source: str,
                                                             line: int) -> None:
    assert run(source, language=lang, bindings=BINDINGS).status is Status.ERROR
    result = run(source, language=lang, bindings=BINDINGS, check=True)
    assert result.status is Status.INVALID, result
    assert result.diagnostics[0].line == line, result.diagnostics


def test_a_python_syntax_error_is_the_checks_only_diagnostic() -> None:
    result = run("    x = await search('q')\n    return x", bindings=BINDINGS, check=True)
    assert result.status is Status.INVALID, result
    assert [(d.type, d.message, d.line) for d in result.diagnostics] == [
        ("SyntaxError", "unexpected indent", 1)]
    result = run("x = 1\nif x\n    return x", bindings=BINDINGS, check=True)
    assert [(d.type, d.line) for d in result.diagnostics] == [("SyntaxError", 2)]


def test_the_checked_program_keeps_its_multiline_strings() -> None:
    from tether.guest.python import check

    source = "s = '''a\n  b\n'''\nt = f'''{s}\nc'''\nreturn s"
    strings = [node.value for node in ast.walk(ast.parse(check.wrap(source)))
               if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    assert "a\n  b\n" in strings and "\nc" in strings, strings
    result = run(source + " + await serch(s)", bindings=BINDINGS, check=True)
    assert [(d.line, d.column) for d in result.diagnostics] == [(6, 18)], result.diagnostics


class Response(BaseModel):
    status: int


class Record(BaseModel):
    id: int


async def handle(r: Response, rec: Record) -> Response:
    """Handle a response."""
    return r


@pytest.mark.parametrize("lang", ["javascript", "typescript"])
def test_types_named_like_a_global_are_checked_as_declared(lang: str) -> None:
    """Not merged with Node's own Response (whose other members would then be required)."""
    bindings = {"handle": handle}
    result = run("const r = await handle({status: 200}, {id: 1});\nreturn r.status",
                 language=lang, bindings=bindings, check=True)
    assert result.ok and result.value == 200, (result.error, result.diagnostics)
    result = run("return await handle({status: 200}, {id: 'x'})", language="typescript",
                 bindings=bindings, check=True)
    assert result.status is Status.INVALID, result
