"""A payload holding a long text or byte string among few data items is
encoded in parts (:func:`encode_payload_parts`), the string's contents a
part of their own: the same bytes as :func:`encode_payload` (R-CBOR-1,
R-CBOR-2), only not joined."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tether.codec import (
    PART_BYTES,
    Binding,
    Call,
    Connection,
    Done,
    Hello,
    PayloadParts,
    Result,
    Role,
    Run,
    RunLimits,
    count_items,
    decode_payload,
    encode_payload,
    encode_payload_parts,
    payload_pieces,
    payload_size,
    to_wire_plain,
    value_excess,
    value_items,
)
from tether.codec.values import PARTS_SEARCH_ITEMS

from ..strategies import values

long_strings = st.one_of(
    st.text(min_size=1, max_size=3).map(lambda t: t * (PART_BYTES // len(t) + 1)),
    st.binary(min_size=1, max_size=3).map(lambda b: b * (PART_BYTES // len(b) + 1)),
)


def documents() -> st.SearchStrategy[Any]:
    """Values of the model with long strings among their leaves."""
    return st.recursive(
        st.one_of(long_strings, values(max_leaves=2)),
        lambda inner: st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=4), inner, max_size=4),
        max_leaves=6)


def encoded(value: Any) -> tuple[bytes, Any]:
    wire, plain = to_wire_plain(value)
    envelope = {"id": 7, "value": wire}
    return encode_payload(envelope), encode_payload_parts(envelope, plain=plain)


@given(documents())
def test_the_same_bytes(value: Any) -> None:
    whole, parts = encoded(value)
    joined = b"".join(payload_pieces(parts))
    assert joined == whole
    assert payload_size(parts) == len(whole)
    if isinstance(parts, PayloadParts):  # counted as the payload's reader counts them
        assert parts.items == count_items(whole, 10**6)


@given(values(max_leaves=30))
def test_without_a_long_string_the_payload_is_whole(value: Any) -> None:
    whole, parts = encoded(value)
    assert parts == whole


def test_a_long_string_is_a_part_of_its_own() -> None:
    text, raw = "x" * PART_BYTES, b"\x01" * PART_BYTES
    payload = encode_payload_parts({"value": [text, 1.5, raw]}, plain=False)
    assert isinstance(payload, PayloadParts)
    assert payload.parts[1] == text.encode()
    assert payload.parts[3] is raw  # not copied
    assert decode_payload(b"".join(payload_pieces(payload))) == {"value": [text, 1.5, raw]}


def test_many_items_are_encoded_whole() -> None:
    """Past PARTS_SEARCH_ITEMS items nobody looks for long strings: the
    search would cost more than the copy it saves."""
    value = [*range(PARTS_SEARCH_ITEMS), "x" * PART_BYTES]
    assert type(encode_payload_parts({"value": value}, plain=True)) is bytes


def test_parts_are_sized_against_value_bytes() -> None:
    payload = encode_payload_parts({"value": "x" * PART_BYTES}, plain=True)
    assert value_excess(payload, PART_BYTES, envelope_bytes=7, envelope_items=2) is not None
    assert value_excess(payload, 2 * PART_BYTES, envelope_bytes=7, envelope_items=2) is None
    many = PayloadParts((b"",), size=100, items=5000)  # items count against value_items too
    assert value_excess(many, 1024, envelope_bytes=7, envelope_items=2) == \
        ("items", value_items(1024))


def test_a_connection_sends_parts_as_one_frame() -> None:
    host, guest = Connection(Role.HOST), Connection(Role.GUEST)
    _running(host, guest)
    text = "é" * PART_BYTES
    payload = encode_payload_parts({"id": 1, "value": text}, plain=True)
    assert isinstance(payload, PayloadParts)
    header, sent = host.send_parts(Result(id=1, value=text), payload)
    assert sent is payload
    guest.receive_data(header + b"".join(payload_pieces(payload)))
    assert guest.next_event() == Result(id=1, value=text)
    reply = encode_payload_parts({"value": text}, plain=True)
    host.receive_data(guest.send(Done(value=text), reply))
    assert host.next_event() == Done(value=text)


def _running(host: Connection, guest: Connection) -> None:
    """Both sides past HELLO and RUN, with one CALL in flight."""
    host.receive_data(guest.send(Hello(implementation="test", languages=("python",))))
    host.next_event()
    guest.receive_data(host.send(Run(source="", language="python", bindings=(Binding("f"),),
                                     limits=RunLimits(output_bytes=1 << 20,
                                                      value_bytes=1 << 20,
                                                      frame_bytes=1 << 22, max_depth=64,
                                                      max_calls_in_flight=1))))
    guest.next_event()
    host.receive_data(guest.send(Call(id=1, name="f", args=[], kwargs={})))
    host.next_event()
