"""A CALL's arguments are checked before the binding runs (strict: no "1" -> 1)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tether.host import prepare_bindings

from .bindings_fixture import BINDINGS, Box, Point, Sky

CALLED: list[Any] = []


def invoke(name: str, *args: Any, **kwargs: Any) -> Any:
    return asyncio.run(prepare_bindings(BINDINGS)[name].invoke(list(args), kwargs))


def refused(name: str, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(TypeError) as info:
        invoke(name, *args, **kwargs)
    return str(info.value)


def test_admitted_arguments_reach_the_binding_as_declared() -> None:
    async def paint(box: Box, sky: Sky, data: bytes | None = None) -> Any:
        return box, sky, data

    binding = prepare_bindings({"paint": paint})["paint"]
    box, sky, data = asyncio.run(binding.invoke(
        [{"corner": {"x": 1, "y": 2}}, "rain"], {"data": b"\x00"}))
    assert box == Box(corner=Point(1, 2)) and sky is Sky.RAIN and data == b"\x00"


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    ([1], {}, "argument 'query': 1 is not of type \"string\""),
    (["q", "3"], {}, "argument 'limit': \"3\" is not of type \"integer\""),
    (["q", True], {}, "argument 'limit': true is not of type \"integer\""),
    (["q"], {"exact": 1}, "argument 'exact': 1 is not of type \"boolean\""),
    ([], {}, "missing a required argument: 'query'"),
    (["q", 1, 2], {}, "too many positional arguments"),
    (["q"], {"nope": 1}, "unexpected keyword argument 'nope'"),
])
def test_a_plain_callable_refuses(args: list[Any], kwargs: dict[str, Any], message: str) -> None:
    assert message in refused("search", *args, **kwargs)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"box": {"corner": {"x": "1", "y": 2}}, "sky": "rain"},
     "argument 'box.corner.x': \"1\" is not of type \"integer\""),
    ({"box": {"corner": {"x": 1, "y": 2}}, "sky": "snow"}, "argument 'sky'"),
    ({"box": {"corner": {"x": 1, "y": 2}}, "sky": "rain", "mode": "dots"}, "argument 'mode'"),
    ({"box": {"corner": {"x": 1, "y": 2}}, "sky": "rain", "data": "text"},
     "argument 'data'"),
    ({"box": {"corner": {"x": 1, "y": 2}}, "sky": "rain", "scores": {"a": "1"}},
     "argument 'scores'"),
    ({"box": [], "sky": "rain"}, "argument 'box'"),
])
def test_every_schema_feature_refuses_what_it_does_not_admit(kwargs: dict[str, Any],
                                                             message: str) -> None:
    text = refused("paint", **kwargs)
    assert message in text
    assert "bytes:" not in text  # the bytes marker never reaches the program


def test_bytes_are_not_text_and_text_is_not_bytes() -> None:
    async def f(data: bytes, name: str) -> Any:
        return data, name

    binding = prepare_bindings({"f": f})["f"]
    assert asyncio.run(binding.invoke([b"x", "n"], {})) == (b"x", "n")
    for args in ([b"x", b"n"], ["x", "n"]):
        with pytest.raises(TypeError):
            asyncio.run(binding.invoke(args, {}))


def test_var_positional() -> None:
    assert invoke("total", 1, 2.5) == 3.5
    assert "argument 'values[1]'" in refused("total", 1, "2")


def test_the_explicit_form_takes_keywords_or_one_object() -> None:
    assert invoke("get_weather", city="Oslo")["city"] == "Oslo"
    assert invoke("get_weather", {"city": "Oslo", "days": 2})["days"] == 2
    assert "\"city\" is a required property" in refused("get_weather")
    assert "argument 'days': 0 is less than the minimum of 1" in refused(
        "get_weather", city="Oslo", days=0)
    assert "by keyword" in refused("get_weather", "Oslo")


def test_a_refused_call_never_invokes_the_binding() -> None:
    calls: list[Any] = []

    def record(n: int) -> int:
        calls.append(n)
        return n

    binding = prepare_bindings({"record": record})["record"]
    with pytest.raises(TypeError):
        asyncio.run(binding.invoke(["1"], {}))
    assert calls == []
    assert asyncio.run(binding.invoke([1], {})) == 1 and calls == [1]


def test_results_are_checked_when_asked() -> None:
    from tether import Binding

    bad = Binding("bad", "", {"type": "object"}, lambda: {"n": "x"},
                  result={"type": "object", "properties": {"n": {"type": "integer"}}},
                  check_result=True)
    with pytest.raises(TypeError, match="result schema refuses"):
        asyncio.run(prepare_bindings([bad])["bad"].invoke([], {}))


def test_long_messages_are_clipped() -> None:
    assert len(refused("search", ["x" * 100_000])) <= 400
