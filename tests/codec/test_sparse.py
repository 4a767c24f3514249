"""A payload of few data items and long strings is decoded item by item
(:func:`decode_sparse`), not by cbor2 and a re-encoding
(:func:`decode_dense`): the two give the same value, or the same error code,
for every payload (R-CBOR-1..8)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.codec import RemoteProtocolError, decode_payload, encode_payload
from tether.codec.values import (
    SPARSE_MIN_BYTES,
    decode_dense,
    decode_payload_in_steps,
    decode_sparse,
)

from ..strategies import values


def outcome(decode: Any, payload: bytes, depth: int = 20) -> Any:
    """The decoded value as its encoding (so NaN equals NaN), or the error code."""
    try:
        return ("value", encode_payload({"": decode(payload, depth)}))
    except RemoteProtocolError as exc:
        return ("error", exc.code)


@given(values(max_leaves=40), st.integers(0, 8))
def test_the_same_value(value: Any, depth: int) -> None:
    payload = encode_payload({"value": value})
    assert outcome(decode_sparse, payload, depth) == outcome(decode_dense, payload, depth)


@settings(max_examples=600)
@given(values(max_leaves=30), st.data())
def test_the_same_outcome_for_corrupted_payloads(value: Any, data: st.DataObject) -> None:
    payload = bytearray(encode_payload({"value": [value, value]}))
    for _ in range(data.draw(st.integers(1, 3))):
        index = data.draw(st.integers(0, len(payload) - 1))
        payload[index] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(payload)))
    corrupted = bytes(payload[:cut]) if data.draw(st.booleans()) else bytes(payload)
    assert outcome(decode_sparse, corrupted) == outcome(decode_dense, corrupted)


@given(st.binary(max_size=64))
def test_the_same_outcome_for_any_bytes(junk: bytes) -> None:
    assert outcome(decode_sparse, junk) == outcome(decode_dense, junk)


@pytest.mark.parametrize("payload", [
    b"\xf9\x7e\x01",  # another NaN
    b"\xfa\x3f\xc0\x00\x00",  # 1.5 fits in 16 bits
    b"\xfb\x3f\xf8\x00\x00\x00\x00\x00\x00",
    b"\xc2\x48\x01\x00\x00\x00\x00\x00\x00\x00",  # a bignum that fits in 64 bits
    b"\xc2\x49\x00\x01\x00\x00\x00\x00\x00\x00\x00",  # a leading zero
    b"\xc3\x41\x01", b"\xc2\x01", b"\xc1\x01", b"\xc2\x61a",
    b"\xf7", b"\xf0", b"\xf8\x20", b"\xfc", b"\xff",
    b"\x18\x01", b"\x19\x00\x01", b"\x58\x01a", b"\x78\x01a",  # not the shortest head
    b"\xa1\x01\x02", b"\xa2\x61a\x01\x61a\x02", b"\x62\xc3\x28", b"\x81", b"\x01\x02",
    b"\x9f\xff", b"\x7f\xff", b"\x5f\xff", b"\xbf\xff", b"\x1c", b"",
])
def test_what_is_refused(payload: bytes) -> None:
    assert outcome(decode_dense, payload)[0] == "error"
    assert outcome(decode_sparse, payload) == outcome(decode_dense, payload)


def test_long_strings_take_the_sparse_path() -> None:
    """Either way the outcome is the same; a bytearray (a frame handed over
    in its receive buffer) is taken as it is."""
    text = "é" * SPARSE_MIN_BYTES
    payload = encode_payload({"value": text, "raw": b"\x00" * SPARSE_MIN_BYTES})
    expected = {"value": text, "raw": b"\x00" * SPARSE_MIN_BYTES}
    assert decode_payload(bytearray(payload)) == expected
    assert decode_payload_in_steps(bytearray(payload), step_bytes=1024) == expected
    broken = bytearray(payload)
    broken[10] = 0xFF  # inside the text: no longer UTF-8
    with pytest.raises(RemoteProtocolError, match="UTF-8"):
        decode_payload(broken)
