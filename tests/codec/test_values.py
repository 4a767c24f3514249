"""Strict payload decoding (spec §5) and the value model (spec §6)."""

from __future__ import annotations

import collections
import datetime
import enum
import math
from typing import Any

import cbor2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tether.codec import (
    DEFAULT_MAX_DEPTH,
    ErrorCode,
    RemoteProtocolError,
    ValueModelError,
    decode_payload,
    encode_payload,
    to_wire,
    to_wire_plain,
)
from tether.codec.values import _checked_plain, _checked_plain_levels, _Slow

from ..strategies import values


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@given(values())
def test_value_round_trip(value: Any) -> None:
    payload = encode_payload({"value": value})
    assert _same(decode_payload(payload), {"value": value})


@given(st.binary(max_size=200))
def test_arbitrary_payload_bytes_raise_only_malformed_payload(junk: bytes) -> None:
    try:
        decode_payload(junk)
    except RemoteProtocolError as exc:
        assert exc.code is ErrorCode.MALFORMED_PAYLOAD


@given(values())
def test_anything_but_the_deterministic_encoding_is_refused(value: Any) -> None:
    canonical = encode_payload({"v": value})
    for variant in (
        cbor2.dumps({"v": value}),  # not canonical: may differ
        cbor2.dumps({"v": value}, canonical=True) + b"\x00",
    ):
        if variant == canonical:
            continue
        with pytest.raises(RemoteProtocolError):
            decode_payload(variant)


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"items": [1, 2, 3, {"when": datetime.date(2026, 1, 1)}]}, "$.items[3].when"),
        ({"a b": {1: 2}}, '$["a b"]'),
        ([set()], "$[0]"),
        ({"ok": ["fine", "bad \udc80"]}, "$.ok[1]"),
        ({"\udc80": 1}, "$"),
        (object(), "$"),
    ],
)
def test_values_outside_the_model_name_their_path(value: Any, path: str) -> None:
    with pytest.raises(ValueModelError) as info:
        to_wire(value)
    assert info.value.path == path


def test_cycles_and_depth_are_reported() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueModelError, match="cycle"):
        to_wire(loop)
    deep: Any = 0
    for _ in range(DEFAULT_MAX_DEPTH + 1):
        deep = [deep]
    with pytest.raises(ValueModelError, match="deeply"):
        to_wire(deep)


def test_python_mapping_normalises_subclasses_and_tuples() -> None:
    class Color(enum.IntEnum):
        RED = 1

    class Name(enum.StrEnum):
        A = "a"

    value = to_wire(collections.OrderedDict(c=(Color.RED, Name.A, bytearray(b"x"), True)))
    assert value == {"c": [1, "a", b"x", True]}
    assert type(value["c"][0]) is int  # type: ignore[index]
    assert type(value["c"][1]) is str  # type: ignore[index]
    assert type(value["c"][3]) is bool  # type: ignore[index]


def test_shared_references_cannot_build_a_dag() -> None:
    """Tag 28/29 would let 30 bytes expand to 2^30 nodes; they are refused."""
    with pytest.raises(RemoteProtocolError, match="tag 28"):
        decode_payload(bytes.fromhex("a16576616c7565d81c8101"))


# -- the fast paths agree with cbor2's canonical mode and the slow walks ----


def _same_order(a: Any, b: Any) -> bool:
    """Equal values whose maps list their keys in the same order."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(map(_same_order, a.values(),
                                                                      b.values()))
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same_order, a, b))
    return _same(a, b)


def _sorted_maps(value: Any) -> Any:
    """The value with every map in RFC 8949 §4.2.1 order (cbor2's canonical mode)."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (len(k.encode()), k.encode()))
        return {k: _sorted_maps(value[k]) for k in keys}
    if isinstance(value, list):
        return [_sorted_maps(v) for v in value]
    return value


@given(values())
def test_encoding_is_cbor2s_canonical_encoding_but_for_map_order(value: Any) -> None:
    """R-CBOR-2: preferred serialization, every map in the sender's order. With
    the maps sorted first, that is exactly cbor2's canonical encoding."""
    data = encode_payload({"value": value})
    assert _same_order(cbor2.loads(data), {"value": value})
    assert len(data) == len(cbor2.dumps({"value": value}, canonical=True))
    expected = cbor2.dumps({"value": value}, canonical=True)
    assert encode_payload({"value": _sorted_maps(value)}) == expected
    wire, plain = to_wire_plain(value)
    assert encode_payload({"value": wire}, plain=plain) == data


@given(values())
def test_to_wire_keeps_map_order(value: Any) -> None:
    assert _same_order(to_wire(value), value)


@given(values())
def test_decoding_keeps_map_order(value: Any) -> None:
    assert _same_order(decode_payload(encode_payload({"value": value})), {"value": value})


@pytest.mark.parametrize("value", [1.5, 0.0, -0.0, math.inf, math.nan, 65504.0, 1e-7, 1 / 3,
                                   3.4028234663852886e38, 1e300, [2.5, 0.1], {"f": 1.0}])
def test_floats_take_the_plain_path_only_when_64_bits_are_needed(value: Any) -> None:
    wire, plain = to_wire_plain(value)
    assert encode_payload({"v": wire}, plain=plain) == cbor2.dumps({"v": value}, canonical=True)
    assert decode_payload(cbor2.dumps({"v": value}, canonical=True))


def test_maps_keep_the_senders_order_and_still_refuse_duplicates() -> None:
    ranked = {"value": [{"zeta": 1, "alpha": 2, "id": 3}]}
    decoded = decode_payload(cbor2.dumps(ranked))  # plain mode keeps this order
    assert list(decoded["value"][0]) == ["zeta", "alpha", "id"]
    assert encode_payload(decoded) == cbor2.dumps(ranked)
    with pytest.raises(RemoteProtocolError, match=r"(?i)duplicate"):
        decode_payload(bytes.fromhex("a16576616c7565a2617a01617a02"))


def test_cycles_and_odd_types_still_name_their_path() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueModelError, match="cycle"):
        to_wire({"a": loop})

    class Colour(enum.IntEnum):
        RED = 1

    assert to_wire({"c": Colour.RED, "t": (1, 2)}) == {"c": 1, "t": [1, 2]}


class Flag(enum.IntEnum):
    ON = 1


odd_leaves = st.sampled_from([(), Flag.ON, 1.5, "é", b"", None, True, collections.OrderedDict()])
odd_values = st.recursive(
    odd_leaves | st.floats() | st.integers(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(max_size=3) | st.integers(0, 3), inner, max_size=4),
    max_leaves=25,
)


@given(odd_values, st.integers(0, 6))
def test_the_level_walk_agrees_with_the_recursive_one(value: Any, depth: int) -> None:
    """R-CBOR-2: the value model check and the choice of float encoding, made
    a level at a time, agree with a walk of every element."""
    outcomes = []
    for check in (_checked_plain, _checked_plain_levels):
        try:
            outcomes.append(check(value, depth))
        except _Slow:
            outcomes.append(None)
    assert outcomes[0] == outcomes[1]
