"""R-CBOR-11 and R-VAL-1: a payload's data items are bounded, and counted
before anything is decoded."""

from __future__ import annotations

from typing import Any

import cbor2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tether.codec import (
    ENVELOPE_ITEMS,
    Connection,
    ErrorCode,
    Hello,
    RemoteProtocolError,
    Role,
    Run,
    RunLimits,
    count_items,
    decode_payload,
    encode_payload,
    exceeds_value_items,
    value_items,
)
from tether.codec.frames import FrameType, encode_frame

from ..strategies import limits, values


def reference_count(value: Any) -> int:
    """Data items as R-CBOR-11 counts them: a bignum (tag and content) is one."""
    if isinstance(value, list):
        return 1 + sum(reference_count(item) for item in value)
    if isinstance(value, dict):
        return 1 + sum(1 + reference_count(item) for item in value.values())
    return 1


@given(values(max_leaves=40))
def test_count_items_counts_every_item(value: Any) -> None:
    payload = encode_payload({"value": value})
    assert count_items(payload, 10**9) == 2 + reference_count(value)


@given(values(max_leaves=40), st.integers(0, 60))
def test_count_items_stops_past_the_limit(value: Any, limit: int) -> None:
    payload = encode_payload({"value": value})
    full = 2 + reference_count(value)
    assert count_items(payload, limit) == min(full, limit + 1)


@given(st.binary(max_size=64))
def test_count_items_never_fails_on_garbage(data: bytes) -> None:
    assert 0 <= count_items(data, 1000) <= 1001


def test_value_items_follows_value_bytes() -> None:
    assert value_items(8 * 1024 * 1024) == 524_288
    assert value_items(1) == 1024  # the floor


@pytest.mark.parametrize("extra", [0, 1])
def test_decode_refuses_more_items_than_allowed(extra: int) -> None:
    limit = 2000
    payload = cbor2.dumps({"value": [[] for _ in range(limit - 3 + extra)]}, canonical=True)
    assert count_items(payload, limit) == limit + extra
    if extra:
        with pytest.raises(RemoteProtocolError) as info:
            decode_payload(payload, 66, limit)
        assert info.value.code is ErrorCode.MALFORMED_PAYLOAD
        assert "data items" in info.value.message
    else:
        assert len(decode_payload(payload, 66, limit)["value"]) == limit - 3


def test_a_bignum_is_one_item() -> None:
    assert count_items(cbor2.dumps([2**80, -(2**80)], canonical=True), 100) == 3


def test_exceeds_value_items_allows_the_envelope() -> None:
    inside = value_items(1)  # 1024
    fits = encode_payload({"value": [0] * (inside - 1)})  # the list counts too
    over = encode_payload({"value": [0] * inside})
    assert not exceeds_value_items(fits, 1, 2)
    assert exceeds_value_items(over, 1, 2)


@given(limits)
def test_the_bound_follows_run_s_value_bytes(run_limits: RunLimits) -> None:
    host, guest = Connection(Role.HOST), Connection(Role.GUEST)
    assert guest.max_items == value_items(8 * 1024 * 1024) + ENVELOPE_ITEMS
    host.receive_data(guest.send(Hello(implementation="test", languages=("python",))))
    assert isinstance(host.next_event(), Hello)
    guest.receive_data(host.send(Run(source="", language="python", bindings=(), limits=run_limits)))
    assert isinstance(guest.next_event(), Run)
    assert guest.max_items == value_items(run_limits.value_bytes) + ENVELOPE_ITEMS


def test_a_connection_refuses_a_frame_of_too_many_items() -> None:
    conn = Connection(Role.HOST, max_items=100)
    payload = cbor2.dumps({"value": [0] * 200}, canonical=True)
    conn.receive_data(encode_frame(FrameType.DONE, payload))
    with pytest.raises(RemoteProtocolError, match="data items"):
        conn.next_event()


def test_ready_payload_size_skips_extension_frames_and_waits_for_the_whole_frame() -> None:
    conn = Connection(Role.HOST)
    hello = encode_payload({"protocol": 1, "languages": ["python"], "capabilities": [],
                            "guest": "test"})
    frame = encode_frame(FrameType.HELLO, hello)
    conn.receive_data(encode_frame(0x90, b"\x00" * 10) + frame[:-1])
    assert conn.ready_payload_size() is None
    conn.receive_data(frame[-1:])
    assert conn.ready_payload_size() == len(hello)


def test_the_value_size_rule_counts_bytes_first_then_items() -> None:
    from tether.codec import Excess, encode_payload, value_excess

    small = encode_payload({"value": "x" * 10})  # the value takes 11 bytes
    assert value_excess(small, 11, envelope_bytes=7, envelope_items=2) is None
    assert value_excess(small, 10, envelope_bytes=7, envelope_items=2) == Excess("bytes", 11)
    many = encode_payload({"value": [0] * 2000})
    assert value_excess(many, 16 * 1024, envelope_bytes=7, envelope_items=2) == \
        Excess("items", 1024)
    assert value_excess(many, 32 * 1024, envelope_bytes=7, envelope_items=2) is None
