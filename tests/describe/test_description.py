"""Describing bindings: JSON Schema from hints, the explicit form, names, refusals."""

from __future__ import annotations

import dataclasses
import datetime
import typing
from collections.abc import Awaitable
from decimal import Decimal
from typing import Any, NotRequired

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from tether import Binding, Runtime
from tether.host import describe, describe_bindings
from tether.host.bindings.identifiers import identifier

from .bindings_fixture import BINDINGS, WEATHER, paint, search


def test_a_callable_becomes_a_json_schema() -> None:
    d = describe(search)
    assert d.name == d.identifier == "search"
    assert d.doc == "Documents that mention ``query``."
    props = d.parameters["properties"]
    assert props["query"] == {"type": "string", "description": "words to look for"}
    assert props["limit"] == {"type": "integer", "default": 3,
                              "description": "at most this many hits"}
    assert d.parameters["required"] == ["query"]
    assert [p.kind.value for p in d.params] == ["positional", "positional", "keyword_only"]
    assert d.result is not None and d.result["type"] == "array"


def test_enum_dataclass_model_literal_bytes_optional_map() -> None:
    d = describe(paint)
    props = d.parameters["properties"]
    defs = d.parameters["$defs"]
    assert defs["Sky"]["enum"] == ["clear", "rain"]
    assert defs["Box"]["properties"]["corner"] == {"$ref": "#/$defs/Point"}
    assert props["mode"]["enum"] == ["fill", "stroke"]
    assert {"type": "string", "format": "binary"} in props["data"]["anyOf"]
    assert props["scores"]["anyOf"][0] == {"type": "object",
                                           "additionalProperties": {"type": "number"}}
    assert d.convert is not None  # enum members, dataclasses and models are built


@pytest.mark.parametrize("hint", [datetime.datetime, set[int], Decimal, dict[int, str],
                                  complex, list[datetime.date]])
def test_types_outside_the_value_model_are_refused_naming_the_parameter(hint: Any) -> None:
    def f(ok: int, bad: Any) -> None: ...

    f.__annotations__["bad"] = hint
    with pytest.raises(TypeError, match=r"binding 'f': parameter 'bad'.*outside the value model"):
        describe(f)


@dataclasses.dataclass
class Event:
    when: datetime.datetime


def test_a_field_outside_the_value_model_is_named() -> None:
    def f(event: Event) -> None: ...

    with pytest.raises(TypeError, match=r"parameter 'event', field 'when'"):
        describe(f)


def test_the_explicit_form_is_first_class() -> None:
    d = describe(WEATHER)
    assert d.explicit and d.name == "get-weather" and d.identifier == "get_weather"
    assert d.parameters["required"] == ["city"]
    assert [p.name for p in d.params] == ["city", "units", "days"]
    assert d.result is not None


def test_an_explicit_schema_must_be_valid() -> None:
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        describe(Binding("x", "", {"type": "object", "properties": {"a": {"type": 3}}},
                         lambda: None))
    with pytest.raises(ValueError, match="type object"):
        describe(Binding("x", "", {"type": "string"}, lambda: None))


@pytest.mark.parametrize(("name", "mapped"), [
    ("get-weather", "get_weather"), ("class", "class_"), ("await", "await_"),
    ("2fa", "_2fa"), ("None", "None_"), ("function", "function_"), ("plain", "plain"),
    ("a.b c", "a_b_c")])
def test_names_become_identifiers_in_every_language(name: str, mapped: str) -> None:
    assert identifier(name) == mapped


def test_names_that_collide_once_mapped_are_refused() -> None:
    with pytest.raises(ValueError, match="both become 'a_b'"):
        describe_bindings({"a-b": search, "a_b": search})


def test_the_fixture_describes() -> None:
    assert [d.identifier for d in describe_bindings(BINDINGS)] == [
        "search", "paint", "total", "anything", "get_weather", "class_"]


def test_a_binding_is_described_once_and_the_cache_is_bounded() -> None:
    from tether.host import prepare_bindings
    from tether.host.bindings import prepared as bindings

    assert prepare_bindings({"s": search})["s"] is prepare_bindings({"s": search})["s"]
    assert prepare_bindings({"s": search}, "javascript")["s"].arguments is prepare_bindings(
        {"s": search})["s"].arguments  # one validator for every language
    for i in range(bindings.CACHE_SIZE + 10):
        def closure(x: int, i: int = i) -> int:
            return x + i

        prepare_bindings({"c": closure})
    assert len(bindings._CACHE) <= bindings.CACHE_SIZE


def test_explicit_keys_that_are_not_python_names_go_as_one_dict(tmp_path: Any) -> None:
    import ast
    import asyncio

    from tether.host import prepare_bindings
    from tether.host.bindings.stubs_python import render

    odd = Binding("lookup", "Find a user.", {"type": "object", "properties": {
        "user-id": {"type": "integer"}, "from": {"type": "string"}}, "required": ["user-id"]},
        lambda **kwargs: kwargs)
    text = render([describe(odd)])
    ast.parse(text)
    assert "LookupArguments = TypedDict('LookupArguments', {'user-id': int, 'from': " in text
    assert "async def lookup(arguments: LookupArguments, /) -> Any:" in text
    binding = prepare_bindings([odd])["lookup"]
    assert asyncio.run(binding.invoke([{"user-id": 1}], {})) == {"user-id": 1}


class Row(dict[str, Any]):
    pass


def test_awaitable_results_and_container_subclasses_are_in_the_model() -> None:
    def later(x: int) -> Awaitable[list[int]]: ...
    def rows() -> Row: ...

    assert describe(later).result == {"type": "array", "items": {"type": "integer"}}
    assert describe(rows).result is None  # pydantic has no schema for it: shown as Any


class _User(BaseModel):
    name: str
    tags: list[str] = Field(default_factory=list)
    note: str | None = None


@dataclasses.dataclass
class _Ref:
    id: int
    status: str = "open"


class _Page(TypedDict):
    items: list[int]
    cursor: NotRequired[str]


async def user() -> _User: ...
async def ref() -> _Ref: ...
async def page() -> _Page: ...


def test_result_fields_with_defaults_are_required() -> None:
    """The dump a program receives always holds a model's or dataclass's
    defaulted fields: the result schema requires them (a TypeScript
    declaration would make them optional). A TypedDict's NotRequired keys
    stay optional."""
    required = {f.__name__: describe(f).result["required"] for f in (user, ref, page)}
    assert required == {"user": ["name", "tags", "note"], "ref": ["id", "status"],
                        "page": ["items"]}


class Forecast(typing.TypedDict):
    """typing's TypedDict, which pydantic refuses before Python 3.12."""

    temp: int
    sky: typing.NotRequired[str]


async def forecast(days: list[Forecast]) -> Forecast:
    """The forecast."""
    return days[0]


def test_typing_typeddicts_keep_their_keys_and_their_name() -> None:
    described = describe(forecast)
    assert described.result is not None
    assert described.result["properties"]["temp"]["type"] == "integer"
    assert described.result["required"] == ["temp"]
    text = Runtime().describe([forecast])
    assert "class Forecast(TypedDict):" in text
    assert "async def forecast(days: list[Forecast]) -> Forecast:" in text
