"""Decoding a large payload in bounded steps (the host's decoding thread
does, so that no single call into the C decoder lasts long) gives exactly
what decoding it at once gives: the same value, or the same error code."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.codec import RemoteProtocolError, decode_payload, encode_payload, to_wire_plain
from tether.codec.values import decode_payload_in_steps, encode_payload_in_steps

from ..strategies import values


def outcome(decode: Any, payload: bytes, **kwargs: Any) -> Any:
    """The decoded value as its encoding (so NaN equals NaN), or the error code."""
    try:
        return ("value", encode_payload({"": decode(payload, 20, **kwargs)}))
    except RemoteProtocolError as exc:
        return ("error", exc.code)


@given(values(max_leaves=60), st.integers(1, 64))
def test_the_same_value_in_steps(value: Any, step: int) -> None:
    payload = encode_payload({"value": value})
    assert outcome(decode_payload_in_steps, payload, step_bytes=step) == \
        outcome(decode_payload, payload)


@settings(max_examples=400)
@given(values(max_leaves=40), st.integers(1, 32), st.data())
def test_the_same_outcome_for_corrupted_payloads(value: Any, step: int,
                                                data: st.DataObject) -> None:
    payload = bytearray(encode_payload({"value": [value, value]}))
    for _ in range(data.draw(st.integers(1, 3))):
        index = data.draw(st.integers(0, len(payload) - 1))
        payload[index] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(payload)))
    for candidate in (bytes(payload), bytes(payload[:cut]), bytes(payload) + b"\x00"):
        at_once = outcome(decode_payload, candidate)
        assert outcome(decode_payload_in_steps, candidate, step_bytes=step) == at_once


@pytest.mark.parametrize("step", [1, 7, 100])
def test_depth_and_duplicate_keys_across_steps(step: int) -> None:
    deep: Any = 0
    for _ in range(19):
        deep = [deep, "padding to make every level large"]
    ok = encode_payload({"value": deep})
    assert decode_payload_in_steps(ok, 20, step_bytes=step) == decode_payload(ok, 20)
    too_deep = encode_payload({"value": [deep]})
    assert outcome(decode_payload_in_steps, too_deep, step_bytes=step) == \
        outcome(decode_payload, too_deep)
    duplicate = b"\xa2" + b"\x61a" + b"\x78\x40" + b"x" * 64 + b"\x61a" + b"\x01"
    assert outcome(decode_payload_in_steps, duplicate, step_bytes=step) == \
        outcome(decode_payload, duplicate)


@given(values(max_leaves=80), st.integers(1, 16))
def test_encoding_in_steps_gives_the_same_bytes(value: Any, step: int) -> None:
    wire, plain = to_wire_plain(value)
    assert encode_payload_in_steps({"value": wire}, plain=plain, step_items=step) == \
        encode_payload({"value": wire}, plain=plain)


def test_encoding_a_large_value_in_steps() -> None:
    value = {"rows": [{"id": i, "score": i / 2} for i in range(3000)], "more": [[]] * 5000}
    wire, plain = to_wire_plain(value)
    pauses = []
    steps = encode_payload_in_steps({"value": wire}, plain=plain, step_items=512,
                                    between_steps=lambda: pauses.append(1))
    assert steps == encode_payload({"value": wire}, plain=plain)
    assert len(pauses) > 20


def test_rows_of_scalars_are_encoded_in_steps() -> None:
    """Elements that hold no container are sized by their lengths alone."""
    rows = [{"id": i, "name": f"item-{i}", "ok": i % 2 == 0} for i in range(5000)]
    wire, plain = to_wire_plain({"rows": rows, "flat": list(range(3000)), "deep": [rows[:3]]})
    pauses = []
    steps = encode_payload_in_steps({"value": wire}, plain=plain, step_items=512,
                                    between_steps=lambda: pauses.append(1))
    assert steps == encode_payload({"value": wire}, plain=plain)
    assert len(pauses) > 40


@pytest.mark.parametrize("value", [[list(range(20000))], {"a": list(range(20000))},
                                   list(range(20000))])
def test_one_long_row_is_encoded_in_steps_too(value: Any) -> None:
    """A row of scalars longer than a step is walked, not encoded in one call."""
    calls: list[int] = []
    wire, plain = to_wire_plain(value)
    steps = encode_payload_in_steps({"value": wire}, plain=plain, step_items=512,
                                    between_steps=lambda: calls.append(1))
    assert steps == encode_payload({"value": wire}, plain=plain)
    assert len(calls) >= 20000 // 512
