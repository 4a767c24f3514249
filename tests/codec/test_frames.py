"""Framing: the construct declaration, the fast path, and incremental decoding."""

from __future__ import annotations

import itertools
import struct

import construct
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.codec import (
    HEADER_SIZE,
    MIN_MAX_FRAME_BYTES,
    NEED_DATA,
    ErrorCode,
    Frame,
    FrameDecoder,
    FrameType,
    LocalProtocolError,
    RemoteProtocolError,
    encode_frame,
)
from tether.codec.frames import HAND_OVER_BYTES, HEADER_STRUCT, check_header
from tether.codec.header import HEADER

headers = st.binary(min_size=HEADER_SIZE, max_size=HEADER_SIZE)


@given(headers)
def test_fast_path_parses_exactly_what_construct_parses(raw: bytes) -> None:
    """R-FRAME-1: the struct hot path and the construct declaration agree."""
    fast = HEADER_STRUCT.unpack(raw)
    try:
        parsed = HEADER.parse(raw)
    except construct.ConstError:
        assert fast[0] != b"TH"
        return
    assert fast == (b"TH", parsed.version, parsed.type, parsed.flags, parsed.length)


@given(st.sampled_from(FrameType), st.binary(max_size=300))
def test_encode_frame_matches_construct_build(frame_type: FrameType, payload: bytes) -> None:
    built = HEADER.build({"version": 1, "type": frame_type, "flags": 0, "length": len(payload)})
    assert encode_frame(frame_type, payload) == built + payload


frames = st.lists(
    st.builds(Frame, st.sampled_from([int(t) for t in FrameType] + [0x80, 0xFF]),
              st.binary(max_size=200)),
    max_size=8,
)


def _decode_all(data_chunks: list[bytes]) -> list[Frame]:
    decoder = FrameDecoder()
    out = []
    for chunk in data_chunks:
        decoder.feed(chunk)
        while (frame := decoder.next_frame()) is not NEED_DATA:
            out.append(frame)
    decoder.check_eof()
    return out


@given(frames, st.data())
def test_any_split_of_a_stream_gives_the_same_frames(
    sent: list[Frame], data: st.DataObject
) -> None:
    stream = b"".join(encode_frame(f.type, f.payload) for f in sent)
    whole = _decode_all([stream])
    bytewise = _decode_all([stream[i : i + 1] for i in range(len(stream))])
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    bounds = [0, *cuts, len(stream)]
    random = _decode_all([stream[a:b] for a, b in itertools.pairwise(bounds)])
    assert whole == bytewise == random == sent


@given(st.binary(max_size=64), st.data())
def test_arbitrary_bytes_raise_only_the_codec_error(junk: bytes, data: st.DataObject) -> None:
    decoder = FrameDecoder(MIN_MAX_FRAME_BYTES)
    step = data.draw(st.integers(1, 16))
    try:
        for i in range(0, len(junk), step):
            decoder.feed(junk[i : i + step])
            while decoder.next_frame() is not NEED_DATA:
                pass
        decoder.check_eof()
    except RemoteProtocolError as exc:
        assert exc.code.fatal


def test_oversized_length_is_rejected_at_the_header() -> None:
    """R-FRAME-5: nothing past the header is needed to refuse the frame."""
    decoder = FrameDecoder(MIN_MAX_FRAME_BYTES)
    decoder.feed(struct.pack(">2sBBHI", b"TH", 1, 5, 0, MIN_MAX_FRAME_BYTES + 1))
    with pytest.raises(RemoteProtocolError) as info:
        decoder.next_frame()
    assert info.value.code is ErrorCode.FRAME_TOO_LARGE


def test_header_rules_apply_in_spec_order() -> None:
    raw = struct.pack(">2sBBHI", b"XX", 9, 0, 1, 2**32 - 1)
    with pytest.raises(RemoteProtocolError) as info:
        check_header(raw, MIN_MAX_FRAME_BYTES)
    assert info.value.code is ErrorCode.FRAME_MALFORMED
    raw = struct.pack(">2sBBHI", b"TH", 1, 0, 0, 2**32 - 1)
    with pytest.raises(RemoteProtocolError) as info:
        check_header(raw, MIN_MAX_FRAME_BYTES)
    assert info.value.code is ErrorCode.FRAME_TOO_LARGE


def test_frame_at_exactly_the_ceiling_passes() -> None:
    decoder = FrameDecoder(MIN_MAX_FRAME_BYTES)
    decoder.feed(encode_frame(FrameType.OUTPUT, bytes(MIN_MAX_FRAME_BYTES)))
    assert decoder.next_frame() == Frame(FrameType.OUTPUT, bytes(MIN_MAX_FRAME_BYTES))


def test_ceiling_has_a_floor() -> None:
    with pytest.raises(ValueError):
        FrameDecoder(MIN_MAX_FRAME_BYTES - 1)


@pytest.mark.parametrize("frame_type", [0x00, 0x09, 0x7F, 0x100])
def test_sender_cannot_encode_reserved_types(frame_type: int) -> None:
    with pytest.raises(LocalProtocolError):
        encode_frame(frame_type, b"")


def test_large_stream_fed_in_small_pieces_keeps_the_buffer_small() -> None:
    """The consumed prefix is compacted: buffering stays linear."""
    payload = bytes(1000)
    one = encode_frame(FrameType.OUTPUT, payload)
    decoder = FrameDecoder()
    for _ in range(2000):
        for i in range(0, len(one), 97):
            decoder.feed(one[i : i + 97])
            while decoder.next_frame() is not NEED_DATA:
                pass
    assert decoder.buffered == 0
    assert len(decoder._buf) < 4 * len(one)


large_frames = st.lists(
    st.builds(Frame, st.sampled_from([int(t) for t in FrameType]),
              st.sampled_from([0, 1, HAND_OVER_BYTES - 1, HAND_OVER_BYTES, 3 * HAND_OVER_BYTES])
              .map(lambda n: bytes(range(256)) * (n // 256) + b"x" * (n % 256))),
    min_size=1, max_size=4,
)


@settings(max_examples=40)
@given(large_frames, st.booleans(), st.data())
def test_large_payloads_are_handed_over_whole(sent: list[Frame], reserve: bool,
                                              data: st.DataObject) -> None:
    """A large payload comes out in a buffer of its own, the same bytes
    whether it was fed or received into :meth:`FrameDecoder.payload_view`."""
    stream = b"".join(encode_frame(f.type, f.payload) for f in sent)
    decoder = FrameDecoder(reserve_payloads=reserve)
    out: list[Frame] = []
    position = 0
    while position < len(stream):
        size = data.draw(st.integers(1, 2 * HAND_OVER_BYTES))
        view = decoder.payload_view()
        if view is not None:
            with view:
                size = min(size, len(view))
                view[:size] = stream[position:position + size]
            decoder.received(size)
        else:
            decoder.feed(stream[position:position + size])
        position += size
        while (frame := decoder.next_frame()) is not NEED_DATA:
            out.append(frame)
    decoder.check_eof()
    assert out == sent
    assert all(type(f.payload) is bytearray for f in out if len(f.payload) >= HAND_OVER_BYTES)


def test_a_reserved_payload_is_received_in_place() -> None:
    payload = b"y" * HAND_OVER_BYTES
    stream = encode_frame(FrameType.RESULT, payload) + encode_frame(FrameType.DONE, b"\xa0")
    decoder = FrameDecoder(reserve_payloads=True)
    decoder.feed(stream[:HEADER_SIZE + 10])
    assert decoder.next_frame() is NEED_DATA
    view = decoder.payload_view()
    assert view is not None and len(view) == HAND_OVER_BYTES - 10
    with view:
        view[:] = payload[10:]
    decoder.received(len(payload) - 10)
    assert decoder.payload_view() is None  # complete: nothing more goes there
    decoder.feed(stream[HEADER_SIZE + HAND_OVER_BYTES:])
    assert decoder.next_frame() == Frame(FrameType.RESULT, payload)
    assert decoder.next_frame() == Frame(FrameType.DONE, b"\xa0")
    assert FrameDecoder().payload_view() is None
