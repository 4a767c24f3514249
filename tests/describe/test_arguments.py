"""A CALL's arguments are checked before the binding runs (strict: no "1" -> 1)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    (["q", 1, 2], {}, "search() takes 2 positional arguments but 3 were given"),
    (["q", 1], {"limit": 2}, "multiple values for argument 'limit'"),
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


_P = inspect.Parameter


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD, _P.VAR_POSITIONAL,
                                 _P.KEYWORD_ONLY, _P.VAR_KEYWORD]), max_size=5),
       st.lists(st.booleans(), min_size=5, max_size=5),
       st.integers(0, 5), st.sets(st.sampled_from(["p0", "p1", "p2", "p3", "p4", "zz"])))
def test_arguments_bind_as_python_binds_them(kinds: list[Any], defaults: list[bool],
                                             n_args: int, keywords: set[str]) -> None:
    kinds = sorted(kinds)
    if kinds.count(_P.VAR_POSITIONAL) > 1 or kinds.count(_P.VAR_KEYWORD) > 1:
        return
    params, default_seen = [], False
    for i, kind in enumerate(kinds):
        has_default = (kind in (_P.KEYWORD_ONLY,) and defaults[i]) or (
            kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)
            and (defaults[i] or default_seen))
        default_seen |= has_default and kind is not _P.KEYWORD_ONLY
        params.append(_P(f"p{i}", kind, default=i if has_default else _P.empty))
    signature = inspect.Signature(params)

    def function(*args: Any, **kwargs: Any) -> Any:
        return signature.bind(*args, **kwargs).arguments

    function.__signature__ = signature  # type: ignore[attr-defined]
    args, kwargs = list(range(n_args)), {k: k for k in keywords}
    try:
        expected: Any = dict(signature.bind(*args, **kwargs).arguments)
    except TypeError:
        expected = TypeError
    binding = prepare_bindings({"f": function})["f"]
    try:
        got: Any = dict(asyncio.run(binding.invoke(args, kwargs)))
    except TypeError:
        got = TypeError
    if isinstance(got, dict):  # *args arrive as a list from the wire, as a tuple here
        got = {k: tuple(v) if isinstance(v, list) else v for k, v in got.items()}
    assert got == expected


def test_a_result_with_bytes_is_checked_too() -> None:
    from tether import Binding

    schema = {"type": "object", "properties": {"data": {"type": "string", "format": "binary"}}}
    good = Binding("good", "", {"type": "object"}, lambda: {"data": b"x"}, result=schema,
                   check_result=True)
    bad = Binding("bad", "", {"type": "object"}, lambda: {"data": "x"}, result=schema,
                  check_result=True)
    assert asyncio.run(prepare_bindings([good])["good"].invoke([], {})) == {"data": b"x"}
    with pytest.raises(TypeError, match="result schema refuses"):
        asyncio.run(prepare_bindings([bad])["bad"].invoke([], {}))


def test_bytes_where_text_is_declared_are_refused_in_plain_words() -> None:
    async def f(name: str, names: list[str], data: bytes) -> Any:
        return name

    binding = prepare_bindings({"f": f})["f"]
    for args, message in (
            ([b"x", [], b""], "f() argument 'name': bytes is not of type \"string\""),
            (["x", [b"y"], b""], "f() argument 'names[0]': bytes is not of type \"string\""),
            (["x", [], "z"], "f() argument 'data': \"z\" is not of type \"bytes\"")):
        with pytest.raises(TypeError) as info:
            asyncio.run(binding.invoke(args, {}))
        assert str(info.value) == message


def test_an_explicit_binding_called_by_position_is_told_how_to_call_it() -> None:
    assert refused("get_weather", "Oslo") == (
        "get_weather() takes its arguments by keyword, or as one dict (an object in "
        "JavaScript)")
